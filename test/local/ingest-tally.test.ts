/** The local stack's tally of the ingest's metrics (local/ingest-tally.ts), which the console's overview shows. */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { INGEST_METRIC } from '../../lambdas/observability/metric-catalogue.ts';
import { IngestTally, TallyMetrics } from '../../local/ingest-tally.ts';

const T = Date.UTC(2026, 11, 7, 12);

/** One invocation's metrics, as the ingest adds them for a duplicate, flushed. */
function duplicate(metrics: TallyMetrics, route: string, tripped = false): void {
  metrics.addMetric(INGEST_METRIC.duplicates, MetricUnit.Count, 1);
  if (tripped) metrics.addMetric(INGEST_METRIC.breakerTripped, MetricUnit.Count, 1);
  metrics.addDimension('route', route);
  metrics.addMetric(INGEST_METRIC.deliveries, MetricUnit.Count, 1);
  metrics.publishStoredMetrics();
}

describe('the ingest tally of the local stack', () => {
  it('counts each route\'s duplicates and breaker trips over the last hour and the last day, as CloudWatch would sum the metrics', () => {
    // Prepare
    const clock = { t: T - 23 * 3_600_000 };
    const tally = new IngestTally(() => clock.t);
    const metrics = new TallyMetrics(tally);
    // Act: one duplicate 23 h ago, two and a trip 10 minutes ago, one on another route, one 25 h ago dropped.
    duplicate(metrics, 'demo');
    clock.t = T - 600_000;
    duplicate(metrics, 'demo');
    duplicate(metrics, 'demo', true);
    duplicate(metrics, 'stripe');
    metrics.addDimension('route', 'demo');
    metrics.addMetric(INGEST_METRIC.deliveries, MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    clock.t = T;
    // Assess
    expect(tally.counts()).toEqual({
      demo: { hour: { duplicates: 2, breakerTrips: 1 }, day: { duplicates: 3, breakerTrips: 1 } },
      stripe: { hour: { duplicates: 1, breakerTrips: 0 }, day: { duplicates: 1, breakerTrips: 0 } },
    });
    clock.t = T + 23.5 * 3_600_000;
    expect(tally.counts().demo).toEqual({ hour: { duplicates: 0, breakerTrips: 0 }, day: { duplicates: 2, breakerTrips: 1 } });
  });
});
