/** The reconciler's metrics (EMF), one set per run. */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { RECONCILER_METRIC } from '../observability/metric-catalogue.ts';
import type { ReconcileReport } from './reconcile.ts';


export function recordReconcileReport(metrics: Metrics, report: ReconcileReport): void {
  metrics.addMetric(RECONCILER_METRIC.scanned, MetricUnit.Count, report.counts.scanned);
  metrics.addMetric(RECONCILER_METRIC.reenqueued, MetricUnit.Count, report.counts.reenqueued);
  metrics.addMetric(RECONCILER_METRIC.reversed, MetricUnit.Count, report.counts.reversed);
  metrics.addMetric(RECONCILER_METRIC.missing, MetricUnit.Count, report.counts.missing);
  metrics.addMetric(RECONCILER_METRIC.orphans, MetricUnit.Count, report.counts.orphans);
  metrics.addMetric(RECONCILER_METRIC.needsAttention, MetricUnit.Count, report.counts.needsAttention);
  metrics.addMetric(RECONCILER_METRIC.stoppedEarly, MetricUnit.Count, report.stoppedEarly ? 1 : 0);
}
