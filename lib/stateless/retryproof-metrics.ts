import { Duration } from 'aws-cdk-lib';
import { Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import { SERVICE } from '../../lambdas/observability/metric-catalogue.ts';
import type { EXECUTOR_METRIC, INGEST_METRIC, RECONCILER_METRIC } from '../../lambdas/observability/metric-catalogue.ts';

/**
 * The CloudWatch side of lambdas/observability/metric-catalogue.ts. A CloudWatch metric
 * is one exact set of dimensions: Powertools adds `service` to every metric a function
 * emits, the functions add `route` (and `status`, `previousStatus` or `outcome` where a
 * metric is about one), so each factory here asks for exactly the set its function
 * emits. A dimension missing or extra would read a metric that never has data.
 */

/** The period of every rate, count and alarm unless a caller says otherwise. */
export const DEFAULT_PERIOD = Duration.minutes(5);

/** The statuses an ingest answers with (docs/architecture.md, "Answers to senders"); each is an `Answers` metric. */
export const ANSWER_STATUSES = [200, 202, 400, 401, 404, 405, 409, 413, 422, 500, 503] as const;

/**
 * The answers a duplicate can find stored as its first answer: 202 (accepted, so the
 * sender lost our ack) or a 5xx (our own failure: 503 for a dependency, 500 otherwise).
 */
export const RETRY_CAUSE_STATUSES = [
  { status: 202, cause: 'ack lost' },
  { status: 500, cause: 'our failure' },
  { status: 503, cause: 'our failure' },
] as const;

/** The ingest's `route` dimension for a path that names no configured route. */
export const UNKNOWN_ROUTE = 'unknown';

type IngestMetricName = (typeof INGEST_METRIC)[keyof typeof INGEST_METRIC];
type ExecutorMetricName = (typeof EXECUTOR_METRIC)[keyof typeof EXECUTOR_METRIC];
type ReconcilerMetricName = (typeof RECONCILER_METRIC)[keyof typeof RECONCILER_METRIC];

/** How a metric is read. */
export interface RetryproofMetricOptions {
  /** @default Sum */
  readonly statistic?: string;
  /** @default 5 minutes */
  readonly period?: Duration;
  /** @default - CloudWatch's own label, the metric name */
  readonly label?: string;
  /** Dimensions beyond `service` and `route`, such as `status`. @default - none */
  readonly dimensions?: Readonly<Record<string, string>>;
}

/**
 * The metrics of one receiver, in its own namespace: receivers of one account and region
 * never count into each other's metrics, alarms or heartbeat, whatever their routes are
 * called. The functions emit into the same namespace (POWERTOOLS_METRICS_NAMESPACE).
 */
export class ReceiverMetrics {
  /** The CloudWatch namespace: the receiver's name prefix (`Retryproof` for the app's own receiver). */
  readonly namespace: string;

  constructor(namespace: string) {
    this.namespace = namespace;
  }

  /** An ingest metric of one route: dimensions {service: retryproof-ingest, route, ...options.dimensions}. */
  ingest(name: IngestMetricName, route: string, options: RetryproofMetricOptions = {}): Metric {
    return this.#metric(name, { service: SERVICE.ingest, route }, options);
  }

  /** An executor metric of one route: dimensions {service: retryproof-executor, route, ...options.dimensions}. */
  executor(name: ExecutorMetricName, route: string, options: RetryproofMetricOptions = {}): Metric {
    return this.#metric(name, { service: SERVICE.executor, route }, options);
  }

  /** A reconciler metric: dimensions {service: retryproof-reconciler}; its runs are not per route. */
  reconciler(name: ReconcilerMetricName, options: RetryproofMetricOptions = {}): Metric {
    return this.#metric(name, { service: SERVICE.reconciler }, options);
  }

  #metric(metricName: string, dimensions: Readonly<Record<string, string>>, options: RetryproofMetricOptions): Metric {
    return new Metric({
      namespace: this.namespace,
      metricName,
      dimensionsMap: { ...dimensions, ...options.dimensions },
      statistic: options.statistic ?? Stats.SUM,
      period: options.period ?? DEFAULT_PERIOD,
      ...(options.label === undefined ? {} : { label: options.label }),
    });
  }
}
