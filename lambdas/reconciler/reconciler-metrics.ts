/** The reconciler's metrics (EMF), one set per run. */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { RECONCILER_METRIC } from '../observability/metric-catalogue.ts';
import type { ReconcileReport } from './reconcile.ts';

/**
 * Records one completed run: the heartbeat (`ReconcilerRuns`, 1) and every count, zeros
 * included, so the findings alarm reads a verdict from each run. A run that throws records
 * nothing, and its missing heartbeat is what the no-run alarm waits for.
 */
export function recordReconcileReport(metrics: Metrics, report: ReconcileReport): void {
  metrics.addMetric(RECONCILER_METRIC.runs, MetricUnit.Count, 1);
  metrics.addMetric(RECONCILER_METRIC.scanned, MetricUnit.Count, report.counts.scanned);
  metrics.addMetric(RECONCILER_METRIC.reenqueued, MetricUnit.Count, report.counts.reenqueued);
  metrics.addMetric(RECONCILER_METRIC.reversed, MetricUnit.Count, report.counts.reversed);
  metrics.addMetric(RECONCILER_METRIC.missing, MetricUnit.Count, report.counts.missing);
  metrics.addMetric(RECONCILER_METRIC.orphans, MetricUnit.Count, report.counts.orphans);
  metrics.addMetric(RECONCILER_METRIC.needsAttention, MetricUnit.Count, report.counts.needsAttention);
  metrics.addMetric(RECONCILER_METRIC.stoppedEarly, MetricUnit.Count, report.stoppedEarly ? 1 : 0);
  // Only a deployment that sweeps (several Regions) has the metric: elsewhere TTL deletes.
  if (report.sweep !== undefined) metrics.addMetric(RECONCILER_METRIC.swept, MetricUnit.Count, report.sweep.swept);
}
