/**
 * One Logger and one Metrics namespace for the project. Powertools reads its own
 * POWERTOOLS_* variables (service name, log level, metrics namespace, and
 * POWERTOOLS_LOGGER_SAMPLE_RATE, the share of invocations that log at DEBUG).
 */
import { LogFormatter, LogItem, Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { EmfOutput, MetricUnit } from '@aws-lambda-powertools/metrics/types';

import { METRICS_NAMESPACE } from './metric-catalogue.ts';

/**
 * Powertools' line without what every line of a log group repeats (issue 26). Powertools'
 * own format adds the function's name, ARN, memory, cold start, sampling rate, service, a
 * timestamp and the trace id to every line: 380 of an ingest line's 538 bytes, each of them
 * already known from the log group (one per function), the event's own timestamp, or Lambda's
 * REPORT line. An INFO line keeps its level, its message and the fields the call gives (route,
 * key, outcome, status, attempt). A WARN or ERROR line, rare and read one at a time, keeps the
 * request id and trace id too, to find the invocation's REPORT line and trace.
 */
export class CompactLogFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additionalLogAttributes: LogAttributes): LogItem {
    const serious = attributes.logLevel === 'WARN' || attributes.logLevel === 'ERROR' || attributes.logLevel === 'CRITICAL';
    const base: LogAttributes = { level: attributes.logLevel, message: attributes.message };
    if (serious) {
      const requestId = attributes.lambdaContext?.awsRequestId;
      if (requestId !== undefined) base.requestId = requestId;
      if (attributes.xRayTraceId !== undefined) base.traceId = attributes.xRayTraceId;
    }
    return new LogItem({ attributes: base }).addAttributes(additionalLogAttributes);
  }
}

/** The project's Logger for one service, in the compact format ({@link CompactLogFormatter}). */
export function createLogger(serviceName: string): Logger {
  return new Logger({ serviceName, logFormatter: new CompactLogFormatter() });
}

/** A metric waiting to be written under dimensions of its own. */
interface AttachedMetric {
  readonly dimensions: Readonly<Record<string, string>>;
  readonly name: string;
  readonly unit: MetricUnit;
  readonly value: number;
}

/**
 * Powertools Metrics whose flush of an empty buffer is silent. Powertools 2.x warns
 * "No application metrics to publish" on every such flush unless `throwOnEmptyMetrics` is
 * set, and throwing would fail the invocation. An invocation with nothing to count is
 * normal here: an executor instance shared by concurrent batches (the local event source)
 * finds its buffer already flushed by a sibling, and a reconciler run that failed before
 * its report counted nothing (its error is logged on its own). Every other Powertools
 * warning (a bad dimension, a timestamp out of range) still reaches the log.
 */
export class QuietMetrics extends Metrics {
  // The parent's flag is private, so both ways of setting it are mirrored here.
  #throwOnEmpty = false;
  /** Metrics under dimensions of their own, written into the next document (see {@link addMetricUnder}). */
  readonly #attached: AttachedMetric[] = [];

  override setThrowOnEmptyMetrics(enabled: boolean): this {
    this.#throwOnEmpty = enabled;
    return super.setThrowOnEmptyMetrics(enabled);
  }

  /** @deprecated as in Powertools: use setThrowOnEmptyMetrics(true) */
  override throwOnEmptyMetrics(): void {
    this.setThrowOnEmptyMetrics(true);
  }

  /**
   * One metric under its own dimensions (and the service), written as one more directive of the
   * invocation's own EMF document instead of a document of its own, as `singleMetric()` would:
   * an EMF document's CloudWatchMetrics is a list of directives, each naming its own dimension
   * set among the document's members (CloudWatch User Guide, "Specification: Embedded metric
   * format", https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
   * The ingest's answer by status then costs no second log line per delivery (issue 26).
   */
  addMetricUnder(dimensions: Readonly<Record<string, string>>, name: string, unit: MetricUnit, value: number): void {
    this.#attached.push({ dimensions, name, unit, value });
  }

  override serializeMetrics(): EmfOutput {
    const out = super.serializeMetrics();
    const doc = out as unknown as Record<string, unknown>;
    const directives = out._aws.CloudWatchMetrics;
    const namespace = directives[0]?.Namespace;
    const separate: AttachedMetric[] = [];
    for (const a of this.#attached) {
      // A member the document holds already with another value, or a metric name it has, cannot share it.
      const clash = a.name in doc || Object.entries(a.dimensions).some(([k, v]) => k in doc && doc[k] !== v);
      if (clash || namespace === undefined) {
        separate.push(a);
        continue;
      }
      Object.assign(doc, a.dimensions, { [a.name]: a.value });
      const set = [...('service' in doc ? ['service'] : []), ...Object.keys(a.dimensions).filter((k) => k !== 'service')];
      directives.push({ Namespace: namespace, Dimensions: [set], Metrics: [{ Name: a.name, Unit: a.unit }] });
    }
    this.#attached.length = 0;
    for (const a of separate) this.singleMetric().addDimensions(a.dimensions).addMetric(a.name, a.unit, a.value);
    return out;
  }

  override publishStoredMetrics(): this {
    // With throwOnEmptyMetrics the parent throws, as asked; that choice stays the caller's.
    if (!this.#throwOnEmpty && !this.hasStoredMetrics()) {
      // Nothing of its own to carry them: each attached metric goes out alone, as singleMetric() would.
      for (const a of this.#attached.splice(0)) this.singleMetric().addDimensions(a.dimensions).addMetric(a.name, a.unit, a.value);
      // What the parent does after a flush, so the next invocation starts clean.
      this.clearDimensions();
      this.clearMetadata();
      return this;
    }
    try {
      return super.publishStoredMetrics();
    } finally {
      this.#attached.length = 0;
    }
  }
}

/**
 * `metric` under `dimensions` (and the service): in the invocation's own document when `metrics`
 * is the project's ({@link QuietMetrics.addMetricUnder}), otherwise in a document of its own.
 */
export function addMetricUnder(metrics: Metrics, dimensions: Readonly<Record<string, string>>, metric: string, unit: MetricUnit, value: number): void {
  if (metrics instanceof QuietMetrics) metrics.addMetricUnder(dimensions, metric, unit, value);
  else metrics.singleMetric().addDimensions({ ...dimensions }).addMetric(metric, unit, value);
}

/**
 * The project's Metrics for one service, in its receiver's namespace (POWERTOOLS_METRICS_NAMESPACE,
 * which the construct sets to the receiver's name prefix; `Retryproof` when unset, as
 * locally); an empty flush is silent.
 */
export function createMetrics(serviceName: string): Metrics {
  const namespace = process.env.POWERTOOLS_METRICS_NAMESPACE;
  return new QuietMetrics({ namespace: namespace === undefined || namespace === '' ? METRICS_NAMESPACE : namespace, serviceName });
}
