/**
 * The ingest's metrics (EMF, one namespace). Dimensions stay low in cardinality: the
 * route (or "unknown"), and a status code where the metric is about one.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { INGEST_METRIC } from '../observability/metric-catalogue.ts';
import { addMetricUnder } from '../observability/powertools.ts';
import type { IngestOutcome } from './ingest-delivery.ts';


/** Counts one delivery and its answer; called exactly once per invocation. */
export function recordAnswer(metrics: Metrics, route: string, status: number): void {
  metrics.addDimension('route', route);
  metrics.addMetric(INGEST_METRIC.deliveries, MetricUnit.Count, 1);
  if (status === 422) metrics.addMetric(INGEST_METRIC.keyReused, MetricUnit.Count, 1);
  if (status === 401) metrics.addMetric(INGEST_METRIC.signatureRejected, MetricUnit.Count, 1);
  // In the invocation's one document, under its own dimension set (issue 26: one metric line per delivery).
  addMetricUnder(metrics, { route, status: String(status) }, INGEST_METRIC.answers, MetricUnit.Count, 1);
}

/** Duplicate-specific figures: the retry cause (the status we answered before) and TTL coverage. */
export function recordDuplicate(metrics: Metrics, outcome: Extract<IngestOutcome, { kind: 'duplicate' }>): void {
  metrics.addMetric(INGEST_METRIC.duplicates, MetricUnit.Count, 1);
  if (outcome.resent) metrics.addMetric(INGEST_METRIC.resent, MetricUnit.Count, 1);
  metrics.addMetric(
    INGEST_METRIC.duplicateAgeShareOfTtl,
    MetricUnit.Percent,
    Math.min(100, (outcome.ageMs / 1000 / outcome.ttlSeconds) * 100),
  );
  addMetricUnder(metrics, { route: outcome.route, previousStatus: String(outcome.previousStatus) }, INGEST_METRIC.retryCause, MetricUnit.Count, 1);
  if (outcome.breaker !== undefined) metrics.addMetric(INGEST_METRIC.breakerTripped, MetricUnit.Count, 1);
  // The RoutePaused alarm is the pause's announcement: counted by the delivery that paused the
  // route, and again by a retried trip of the same key, whose first count may have died with its function.
  if (outcome.breaker?.outcome === 'paused' || outcome.breaker?.notice?.reaction === 'pause') {
    metrics.addMetric(INGEST_METRIC.routePaused, MetricUnit.Count, 1);
  }
}
