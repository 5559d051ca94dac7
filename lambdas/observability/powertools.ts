/**
 * One Logger and one Metrics namespace for the project. Powertools reads its own
 * POWERTOOLS_* variables (service name, log level, metrics namespace).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

import { METRICS_NAMESPACE } from './metric-catalogue.ts';

export function createLogger(serviceName: string): Logger {
  return new Logger({ serviceName });
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
