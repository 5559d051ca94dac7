/** The executor's metrics (EMF): executions by outcome, per route. */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { EXECUTOR_METRIC } from '../observability/metric-catalogue.ts';
import { EXECUTION_OUTCOME } from './execute-message.ts';
import type { ExecutionReport } from './execute-message.ts';

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

/**
 * One metric under its own dimensions. A single-metric instance publishes on its first
 * addMetric and clears its dimensions then, so each metric needs a fresh one.
 */
function emit(metrics: Metrics, dimensions: Record<string, string>, name: string, unit: Unit, value: number): void {
  metrics.singleMetric().addDimensions(dimensions).addMetric(name, unit, value);
}

export function recordExecution(metrics: Metrics, report: ExecutionReport): void {
  const route = report.route === undefined || report.route === '' ? 'unknown' : report.route;
  emit(metrics, { route, outcome: report.outcome }, EXECUTOR_METRIC.executions, MetricUnit.Count, 1);
  const perRoute = { route };
  if (report.outcome === EXECUTION_OUTCOME.duplicate) emit(metrics, perRoute, EXECUTOR_METRIC.duplicateMessages, MetricUnit.Count, 1);
  if (report.outcome === EXECUTION_OUTCOME.fencedOut) emit(metrics, perRoute, EXECUTOR_METRIC.fencedOut, MetricUnit.Count, 1);
  if (report.outcome === EXECUTION_OUTCOME.expired) emit(metrics, perRoute, EXECUTOR_METRIC.expired, MetricUnit.Count, 1);
  // Counted once, when the dead-letter copy is made; its trips toward the DLQ are not hand-backs.
  const inFlight = report.outcome === EXECUTION_OUTCOME.toDeadLetterQueue;
  if (report.deadLetterReason !== undefined && !inFlight) emit(metrics, perRoute, EXECUTOR_METRIC.dlqArrivals, MetricUnit.Count, 1);
  if (!report.ack && !inFlight) emit(metrics, perRoute, EXECUTOR_METRIC.handedBack, MetricUnit.Count, 1);
  if (report.outcome === EXECUTION_OUTCOME.parked) emit(metrics, perRoute, EXECUTOR_METRIC.parked, MetricUnit.Count, 1);
  if (report.outcome === EXECUTION_OUTCOME.permanent || report.outcome === EXECUTION_OUTCOME.exhausted) {
    emit(metrics, perRoute, EXECUTOR_METRIC.failed, MetricUnit.Count, 1);
  }
  if (report.leaseShare !== undefined) {
    emit(metrics, perRoute, EXECUTOR_METRIC.actionShareOfLease, MetricUnit.Percent, Math.round(report.leaseShare * 1000) / 10);
  }
}
