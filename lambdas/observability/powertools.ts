/**
 * One Logger and one Metrics namespace for the project. Powertools reads its own
 * POWERTOOLS_* variables (service name, log level, metrics namespace, and
 * POWERTOOLS_LOGGER_SAMPLE_RATE, the share of invocations that log at DEBUG).
 */
import { LogFormatter, LogItem, Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { Metrics } from '@aws-lambda-powertools/metrics';

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

  override setThrowOnEmptyMetrics(enabled: boolean): this {
    this.#throwOnEmpty = enabled;
    return super.setThrowOnEmptyMetrics(enabled);
  }

  /** @deprecated as in Powertools: use setThrowOnEmptyMetrics(true) */
  override throwOnEmptyMetrics(): void {
    this.setThrowOnEmptyMetrics(true);
  }

  override publishStoredMetrics(): this {
    // With throwOnEmptyMetrics the parent throws, as asked; that choice stays the caller's.
    if (!this.#throwOnEmpty && !this.hasStoredMetrics()) {
      // What the parent does after a flush, so the next invocation starts clean.
      this.clearDimensions();
      this.clearMetadata();
      return this;
    }
    return super.publishStoredMetrics();
  }
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
