import { Duration, Stack } from 'aws-cdk-lib';
import { MathExpression, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { RECONCILER_METRIC } from '../../lambdas/observability/metric-catalogue.ts';
import type { ObservabilityProps } from './observability.ts';
import type { AddAlarm } from './receiver-alarms.ts';
import { DEFAULT_PERIOD } from './retryproof-metrics.ts';

/**
 * The no-run alarm's window is at least this many hours, and at least two schedule
 * intervals: one run lost to a transient error is retried by the next, and is not a page.
 */
const HEARTBEAT_MIN_HOURS = 2;
/**
 * The CloudWatch Logs Insights query that finds the reconciler's reports with findings,
 * newest first. The handler logs each run's whole report as `reconciliation report`.
 */
export const FINDINGS_QUERY =
  'filter message = "reconciliation report" and (report.counts.reversed > 0 or report.counts.missing > 0 ' +
  'or report.counts.orphans > 0 or report.counts.needsAttention > 0) | sort @timestamp desc | limit 5';

/** The reconciler corrected or flagged something in its last run. */
export function addReconcilerFindingsAlarm(addAlarm: AddAlarm, props: ObservabilityProps): void {
  const { metrics } = props;
  addAlarm('ReconcilerFindings', {
    name: 'reconciler-findings',
    description:
      'The last reconciler run corrected or flagged something: it reversed a duplicate effect, found an effect missing or without a record, or needs a person. ' +
      // The report stays in the log, not on this topic: it is already there whole (keys,
      // findings, reversals), and a publish after the run could fail a run whose work is done.
      'First read that run\'s report, which is in the reconciler\'s log and not on this topic (the alarm stays until a later run finds nothing): ' +
      `in CloudWatch Logs Insights, on log group ${props.reconcilerLogs.logGroupName}, run ${FINDINGS_QUERY}`,
    metric: new MathExpression({
      expression: 'reversed + needsAttention + missing + orphans',
      usingMetrics: {
        reversed: metrics.reconciler(RECONCILER_METRIC.reversed),
        needsAttention: metrics.reconciler(RECONCILER_METRIC.needsAttention),
        missing: metrics.reconciler(RECONCILER_METRIC.missing),
        orphans: metrics.reconciler(RECONCILER_METRIC.orphans),
      },
      label: 'reconciler corrections and findings',
      period: DEFAULT_PERIOD,
    }),
    threshold: 0,
    // Every run reports all four counts, zeros included, and runs are an hour apart: the
    // state between runs is the last run's verdict, and OK comes from a clean run.
    treatMissingData: TreatMissingData.IGNORE,
    recovers: true,
  });
}

/**
 * The alarms that watch the reconciler itself. Its findings alarm reads only what a run
 * reports, and keeps the last verdict through silence, so a reconciler that never runs or
 * always crashes would look clean for weeks. These say so: its errors, its throttles, the
 * schedule failing to invoke it, and the heartbeat, a run that completed (`ReconcilerRuns`),
 * whose absence is the one signal that covers every way a run can fail to happen.
 */
export function addReconcilerHeartbeat(scope: Construct, addAlarm: AddAlarm, props: ObservabilityProps): void {
  const hours = Math.max(HEARTBEAT_MIN_HOURS, Math.ceil((2 * props.reconcileEveryMinutes) / 60));
  addAlarm('ReconcilerNoRun', {
    name: 'reconciler-no-run',
    description:
      `No reconciler run has completed for ${hours} hours (the alarm then reads INSUFFICIENT_DATA: no run, no data point): stuck work is not re-enqueued, duplicate effects are not reversed, and the findings alarm sees nothing to report. ` +
      'First look at the reconciler-errors, reconciler-throttled and reconcile-schedule-failed alarms and the reconciler\'s log; the next run that completes clears this alarm.',
    // One data point per clock hour. Missing data as breaching would fire at deploy, before the
    // first run is due; as missing, hours without a run end in INSUFFICIENT_DATA, which notifies,
    // while a new alarm starts there and so says nothing (docs/architecture.md, "Metrics and alarms").
    metric: props.metrics.reconciler(RECONCILER_METRIC.runs, { period: Duration.hours(1) }),
    threshold: 1,
    below: true,
    evaluationPeriods: hours,
    treatMissingData: TreatMissingData.MISSING,
    recovers: true,
    silenceNotifies: true,
  });
  addAlarm('ReconcilerErrors', {
    name: 'reconciler-errors',
    description:
      'The reconciler function failed a run (an uncaught error or its timeout), so that run\'s re-enqueues, reversals and findings wait for one that succeeds. ' +
      `First find the error in the reconciler's log; once it is fixed, a run started by hand (npx retryproof --stack ${Stack.of(scope).stackName} reconcile) catches up.`,
    metric: props.reconciler.metricErrors({ statistic: Stats.SUM, period: DEFAULT_PERIOD }),
    threshold: 0,
    // Lambda counts 0 errors for every invocation that succeeds, so missing data only means
    // no run in these 5 minutes: the verdict of the last run stands until the next one.
    treatMissingData: TreatMissingData.IGNORE,
    recovers: true,
  });
  addAlarm('ReconcilerThrottles', {
    name: 'reconciler-throttled',
    description:
      'A reconciler invocation was throttled: the account, or the function, had no concurrency left; Lambda retries it for up to 6 hours, and this alarm is an event, OK again 5 minutes later. ' +
      'First check the account\'s concurrent executions; the reconciler-no-run alarm says whether runs resumed.',
    metric: props.reconciler.metricThrottles({ statistic: Stats.SUM, period: DEFAULT_PERIOD }),
    threshold: 0,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    recovers: false,
  });
  const group = props.reconcileScheduleGroup;
  addAlarm('ReconcileScheduleFailed', {
    name: 'reconcile-schedule-failed',
    description:
      'EventBridge Scheduler could not invoke the reconciler (the call to Lambda failed, or an invocation was dropped after its retries), so a run never started; this alarm is an event. ' +
      'First read the target error on the schedule in the EventBridge Scheduler console, and check that its role may still invoke the function; the reconciler-no-run alarm says whether runs resumed.',
    // The scheduler's counterpart of an EventBridge rule's FailedInvocations: a failed call
    // to the target (TargetErrorCount) and an invocation given up on (InvocationDroppedCount).
    metric: new MathExpression({
      expression: 'FILL(targetErrors, 0) + FILL(dropped, 0)',
      usingMetrics: {
        targetErrors: group.metricTargetErrors({ statistic: Stats.SUM, period: DEFAULT_PERIOD }),
        dropped: group.metricDropped({ statistic: Stats.SUM, period: DEFAULT_PERIOD }),
      },
      label: 'failed reconcile invocations',
      period: DEFAULT_PERIOD,
    }),
    threshold: 0,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    recovers: false,
  });
}
