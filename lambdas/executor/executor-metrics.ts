/** The executor's metrics (EMF): executions by outcome, per route. */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { addMetricUnder } from '../observability/powertools.ts';
import { EXECUTOR_METRIC } from '../observability/metric-catalogue.ts';
import { EXECUTION_OUTCOME } from './execute-message.ts';
import type { ExecutionReport } from './execute-message.ts';

/**
 * Counts one batch's executions: one EMF document per route, holding `Executions` per outcome
 * (the number of records, each under its route and outcome) and every other per-route figure of
 * the batch (each action's share of its lease as one array, the counts that matter on their
 * own), only those with something to count. Per record that was two to four documents of about
 * 250 bytes each (issue 26); per batch of five it is now one. The figures and their dimensions
 * are the ones the alarms and the dashboard read (lib/stateless/observability.ts), summed the same.
 *
 * The per-route document goes through the shared `metrics` buffer: dimension, metrics and
 * publish run with no await between them, so a concurrent batch on the same instance (the
 * local event source) cannot interleave its own.
 */
export function recordExecutions(metrics: Metrics, reports: readonly ExecutionReport[]): void {
  const byRoute = new Map<string, ExecutionReport[]>();
  for (const report of reports) {
    const route = report.route === undefined || report.route === '' ? 'unknown' : report.route;
    const list = byRoute.get(route);
    if (list === undefined) byRoute.set(route, [report]);
    else list.push(report);
  }
  for (const [route, routeReports] of byRoute) {
    const outcomes = new Map<string, number>();
    for (const r of routeReports) outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + 1);
    // A directive of the route's document below (or a document of its own when it cannot share it): no Metrics instance per batch.
    for (const [outcome, count] of outcomes) addMetricUnder(metrics, { route, outcome }, EXECUTOR_METRIC.executions, MetricUnit.Count, count);

    const counts = new Map<string, number>();
    const count = (name: string): void => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
    };
    const shares: number[] = [];
    for (const report of routeReports) {
      if (report.outcome === EXECUTION_OUTCOME.duplicate) count(EXECUTOR_METRIC.duplicateMessages);
      if (report.outcome === EXECUTION_OUTCOME.fencedOut) count(EXECUTOR_METRIC.fencedOut);
      if (report.outcome === EXECUTION_OUTCOME.expired) count(EXECUTOR_METRIC.expired);
      // Counted once, when the dead-letter copy is made; its trips toward the DLQ are not hand-backs.
      const inFlight = report.outcome === EXECUTION_OUTCOME.toDeadLetterQueue;
      if (report.deadLetterReason !== undefined && !inFlight) count(EXECUTOR_METRIC.dlqArrivals);
      if (!report.ack && !inFlight) count(EXECUTOR_METRIC.handedBack);
      if (report.outcome === EXECUTION_OUTCOME.parked) count(EXECUTOR_METRIC.parked);
      if (report.outcome === EXECUTION_OUTCOME.permanent || report.outcome === EXECUTION_OUTCOME.exhausted) count(EXECUTOR_METRIC.failed);
      if (report.leaseShare !== undefined) shares.push(Math.round(report.leaseShare * 1000) / 10);
    }
    if (counts.size === 0 && shares.length === 0) {
      metrics.publishStoredMetrics();
      continue;
    }
    metrics.addDimension('route', route);
    for (const [name, value] of counts) metrics.addMetric(name, MetricUnit.Count, value);
    // The same name added again is kept as one more value of an array (EMF allows 100 per document).
    for (const share of shares) metrics.addMetric(EXECUTOR_METRIC.actionShareOfLease, MetricUnit.Percent, share);
    metrics.publishStoredMetrics();
  }
}
