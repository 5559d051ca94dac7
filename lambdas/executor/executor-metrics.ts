/** The executor's metrics (EMF): executions by outcome, per route. */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { EXECUTOR_METRIC } from '../observability/metric-catalogue.ts';
import { EXECUTION_OUTCOME } from './execute-message.ts';
import type { ExecutionReport } from './execute-message.ts';


export function recordExecution(metrics: Metrics, report: ExecutionReport): void {
  const route = report.route === undefined || report.route === '' ? 'unknown' : report.route;
  const single = metrics.singleMetric().addDimensions({ route, outcome: report.outcome });
  single.addMetric(EXECUTOR_METRIC.executions, MetricUnit.Count, 1);
  const perRoute = metrics.singleMetric().addDimensions({ route });
  if (report.outcome === EXECUTION_OUTCOME.duplicate) perRoute.addMetric(EXECUTOR_METRIC.duplicateMessages, MetricUnit.Count, 1);
  if (report.outcome === EXECUTION_OUTCOME.fencedOut) perRoute.addMetric(EXECUTOR_METRIC.fencedOut, MetricUnit.Count, 1);
  if (report.outcome === EXECUTION_OUTCOME.expired) perRoute.addMetric(EXECUTOR_METRIC.expired, MetricUnit.Count, 1);
  if (report.deadLetterReason !== undefined) perRoute.addMetric(EXECUTOR_METRIC.dlqArrivals, MetricUnit.Count, 1);
  if (!report.ack) perRoute.addMetric(EXECUTOR_METRIC.handedBack, MetricUnit.Count, 1);
  if (report.outcome === EXECUTION_OUTCOME.parked) perRoute.addMetric(EXECUTOR_METRIC.parked, MetricUnit.Count, 1);
  if (report.outcome === EXECUTION_OUTCOME.permanent || report.outcome === EXECUTION_OUTCOME.exhausted) {
    perRoute.addMetric(EXECUTOR_METRIC.failed, MetricUnit.Count, 1);
  }
  if (report.leaseShare !== undefined) {
    perRoute.addMetric(EXECUTOR_METRIC.actionShareOfLease, MetricUnit.Percent, Math.round(report.leaseShare * 1000) / 10);
  }
}
