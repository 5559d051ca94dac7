import { Duration, Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  SingleValueWidget,
  Stats,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { IScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ResolvedConfig } from '../../lambdas/config/resolve-config.ts';
import { EXECUTOR_METRIC, INGEST_METRIC, RECONCILER_METRIC } from '../../lambdas/observability/metric-catalogue.ts';
import { alarmName } from '../stateful/alarm-topic.ts';
import { signatureRejectionAlarm } from './signature-rejection-alarm.ts';
import {
  ANSWER_STATUSES,
  DEFAULT_PERIOD,
  RETRY_CAUSE_STATUSES,
  UNKNOWN_ROUTE,
} from './retryproof-metrics.ts';
import type { ReceiverMetrics } from './retryproof-metrics.ts';

/** Props of {@link Observability}. */
export interface ObservabilityProps {
  readonly ingest: IFunction;
  readonly executor: IFunction;
  readonly reconciler: IFunction;
  /** The reconciler's log group, where each run's report is; the findings alarm names it. */
  readonly reconcilerLogs: ILogGroup;
  /** The group holding only the reconcile schedule, whose invocation metrics are the reconciler's alone. */
  readonly reconcileScheduleGroup: IScheduleGroup;
  /** Minutes between two scheduled reconciler runs. */
  readonly reconcileEveryMinutes: number;
  /** The work queue the executor consumes. */
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  /** The webhook HTTP API; its own 5xx count includes answers the ingest never gave. */
  readonly api: IHttpApi;
  /** Where every alarm sends its notice. */
  readonly alarmTopic: ITopic;
  /** The resolved configuration: routes, leases and the duplicate-storm thresholds. */
  readonly resolved: ResolvedConfig;
  /** The receiver's name prefix: every alarm's name starts with it. */
  readonly namePrefix: string;
  /** The receiver's metrics, in the namespace its functions emit into. */
  readonly metrics: ReceiverMetrics;
  /** Dashboards are account-wide: the name must be unique across regions and receivers. */
  readonly dashboardName: string;
  /**
   * Each route's secret's name in Secrets Manager, for the alarms to name it.
   * @default - the route's secretName as written
   */
  readonly secretNames?: ReadonlyMap<string, string>;
}

/** SQS publishes its queue metrics once a minute. */
const QUEUE_PERIOD = Duration.minutes(1);
/** Minutes in a row the oldest message must be older than its retries allow before anyone is woken. */
const OLDEST_MESSAGE_MINUTES = 3;
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

/** One alarm, as this construct builds them all: above a threshold, notifying the topic. */
interface AlarmSpec {
  /** The alarm's name after the stack's prefix, e.g. `dlq-not-empty`. */
  readonly name: string;
  /** What it means and what to do first: operators read this in the e-mail. */
  readonly description: string;
  readonly metric: IMetric;
  /** The alarm fires above this value (below it, with `below`). */
  readonly threshold: number;
  /** Fire below the threshold instead of above it. @default false */
  readonly below?: boolean;
  /** @default 1 */
  readonly evaluationPeriods?: number;
  /** The breaching periods out of `evaluationPeriods` that fire it. @default - all of them */
  readonly datapointsToAlarm?: number;
  readonly treatMissingData: TreatMissingData;
  /**
   * Whether OK means the problem is over, and so is worth a notice too. An event alarm
   * (a pause happened) returns to OK while the problem stays, so it notifies only on ALARM.
   */
  readonly recovers: boolean;
}

/**
 * What operators watch (docs/architecture.md, "Metrics and alarms"): one CloudWatch dashboard with the
 * four numbers (duplicate rate, retry causes, TTL and lease coverage, manual-intervention
 * rate), the queues and the functions; and the alarms, each notifying the alarm topic.
 * Metric names and dimensions come from lambdas/observability/metric-catalogue.ts, the
 * list the functions emit from.
 */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { resolved, metrics } = props;
    const routes = resolved.routes.map((r) => r.name);
    const { duplicateStormShare, duplicateStormMinDeliveries } = resolved.alarms;
    const action = new SnsAction(props.alarmTopic);

    const alarms: Alarm[] = [];
    const addAlarm = (alarmId: string, spec: AlarmSpec) => {
      const alarm = new Alarm(this, alarmId, {
        alarmName: alarmName(props.namePrefix, spec.name),
        alarmDescription: spec.description,
        metric: spec.metric,
        threshold: spec.threshold,
        comparisonOperator: spec.below === true ? ComparisonOperator.LESS_THAN_THRESHOLD : ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: spec.evaluationPeriods ?? 1,
        ...(spec.datapointsToAlarm === undefined ? {} : { datapointsToAlarm: spec.datapointsToAlarm }),
        treatMissingData: spec.treatMissingData,
      });
      alarm.addAlarmAction(action);
      if (spec.recovers) alarm.addOkAction(action);
      alarms.push(alarm);
    };

    // Alarms.
    addAlarm('DlqNotEmpty', {
      name: 'dlq-not-empty',
      description:
        'The dead-letter queue holds a message: a recorded delivery could not be executed and needs a person. ' +
        'First read the message (it carries the whole operation context) and the executor logs; fix the cause, then start a DLQ redrive in the SQS console.',
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD }),
      threshold: 0,
      // SQS stops publishing for a queue idle for hours; a queue with messages is never idle.
      treatMissingData: TreatMissingData.NOT_BREACHING,
      recovers: true,
    });
    // The circuit breaker's announcements: the ingest sends no notice itself (it has no SNS
    // client); these alarms do, and point to where the notice is kept.
    for (const route of resolved.routes) {
      if (route.breakerReaction === 'pause') {
        addAlarm(`RoutePaused-${route.name}`, {
          name: `route-paused-${route.name}`,
          description:
            `Route "${route.name}" was paused: one key came more than ${route.breakerThreshold} times, and its new work is parked, not lost; ` +
            'this alarm is an event, sent once per pause, and is OK again a minute later although the route stays paused until someone resumes it. ' +
            'First run `npx retryproof --stack <name> routes list` (the pause names the key, its counts and the reason, and how to resume; ' +
            'the ingest log line "circuit breaker tripped" carries the same notice), find why the sender repeats that key, then resume the route.',
          metric: metrics.ingest(INGEST_METRIC.routePaused, route.name, { period: Duration.minutes(1) }),
          threshold: 0,
          treatMissingData: TreatMissingData.NOT_BREACHING,
          recovers: false,
        });
      } else {
        addAlarm(`BreakerAlert-${route.name}`, {
          name: `breaker-alert-${route.name}`,
          description:
            `A key of route "${route.name}" came back ${route.breakerThreshold} times after we had answered it; the route only alerts, so its work still runs, ` +
            'and this alarm is an event, OK again a minute later. First find the key and its counts in the ingest log line "circuit breaker tripped" ' +
            `(Logs Insights on the ingest's log group: filter message = "circuit breaker tripped" and route = "${route.name}"), then find why the sender repeats it.`,
          metric: metrics.ingest(INGEST_METRIC.breakerTripped, route.name, { period: Duration.minutes(1) }),
          threshold: 0,
          treatMissingData: TreatMissingData.NOT_BREACHING,
          recovers: false,
        });
      }
    }
    resolved.routes.forEach((route, i) => {
      addAlarm(`DuplicateStorm-${route.name}`, {
        name: `duplicate-storm-${route.name}`,
        description:
          `Over ${Math.round(duplicateStormShare * 100)}% of route "${route.name}"'s deliveries in 5 minutes were duplicates ` +
          `(counted from ${duplicateStormMinDeliveries} deliveries up): the sender is retrying hard. ` +
          'Check the retry causes on the dashboard first: 2xx before means our acks do not reach the sender in time, 5xx before means our own failures.',
        metric: new MathExpression({
          expression: `IF(deliveries${i} >= ${duplicateStormMinDeliveries}, duplicates${i} / deliveries${i}, 0)`,
          usingMetrics: {
            [`deliveries${i}`]: metrics.ingest(INGEST_METRIC.deliveries, route.name),
            [`duplicates${i}`]: metrics.ingest(INGEST_METRIC.duplicates, route.name),
          },
          label: `duplicate share, ${route.name}`,
          period: DEFAULT_PERIOD,
        }),
        threshold: duplicateStormShare,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        recovers: true,
      });
    });
    resolved.routes.forEach((route, i) => {
      const spec = signatureRejectionAlarm(metrics, route.name, i, props.secretNames?.get(route.name) ?? route.secretName);
      addAlarm(`SignatureRejections-${route.name}`, { ...spec, treatMissingData: TreatMissingData.NOT_BREACHING, recovers: true });
    });
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
    addAlarm('Ingest5xx', {
      name: 'ingest-5xx',
      description:
        'The webhook API answered 5xx in the last 5 minutes: our own failure (DynamoDB, SQS or a signing secret unavailable, or the ingest crashed, timed out or was throttled). ' +
        'Senders retry and the retry completes the work; look at the ingest errors and logs first.',
      // API Gateway's count, not the ingest's Answers: it also counts the 5xx API Gateway gives
      // when the ingest never answers (crash, timeout, throttle), which no function can count.
      metric: props.api.metricServerError({ period: DEFAULT_PERIOD }),
      threshold: 0,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      recovers: true,
    });
    // An ordinary retry hides its message for the whole visibility timeout, and a locked
    // hand-back for what is left of a lease, so a message that is merely being retried grows
    // old: up to its route's retry budget of attempts, each a lease plus a visibility timeout,
    // before it is done or dead-lettered. Only a message older than that is work the executor
    // is not picking up at all (behind, throttled, not running); one retry never is.
    const retryBudget = resolved.routes
      .map((route) => ({ route, seconds: route.maxAttempts * (route.leaseSeconds + resolved.queue.visibilityTimeoutSeconds) }))
      .reduce((a, b) => (b.seconds > a.seconds ? b : a));
    addAlarm('OldestMessageOverRetries', {
      name: 'queue-oldest-over-retries',
      description:
        `For ${OLDEST_MESSAGE_MINUTES} minutes a message has waited in the work queue longer than the longest retry budget takes ` +
        `(${retryBudget.seconds} s: route "${retryBudget.route.name}"'s ${retryBudget.route.maxAttempts} attempts, each a ${retryBudget.route.leaseSeconds} s lease ` +
        `plus the ${resolved.queue.visibilityTimeoutSeconds} s visibility timeout), which retries and locked hand-backs never reach: ` +
        'the executor is not keeping up, is throttled or is not running. Check the executor errors, throttles and concurrency first.',
      metric: props.queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD }),
      threshold: retryBudget.seconds,
      evaluationPeriods: OLDEST_MESSAGE_MINUTES,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      recovers: true,
    });
    addAlarm('ExecutorErrors', {
      name: 'executor-errors',
      description:
        'The executor function failed (an uncaught error or a timeout), so its whole batch went back to the queue; repeated failures end in the DLQ. ' +
        'Look for the error in the executor logs first.',
      metric: props.executor.metricErrors({ statistic: Stats.SUM, period: DEFAULT_PERIOD }),
      threshold: 0,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      recovers: true,
    });
    addReconcilerHeartbeat(this, addAlarm, props);
    this.alarms = alarms;

    // Dashboard.
    const duplicateRates = (period?: Duration) =>
      routes.map(
        (route, i) =>
          new MathExpression({
            // No duplicate in a period leaves no data point; FILL makes that a rate of 0.
            expression: `FILL(duplicates${i}, 0) / deliveries${i}`,
            usingMetrics: {
              [`duplicates${i}`]: metrics.ingest(INGEST_METRIC.duplicates, route),
              [`deliveries${i}`]: metrics.ingest(INGEST_METRIC.deliveries, route),
            },
            label: route,
            period: period ?? DEFAULT_PERIOD,
          }),
      );
    const intervention = interventionExpressions(metrics, routes);

    const dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
    });
    dashboard.addWidgets(
      new TextWidget({
        width: 24,
        height: 3,
        markdown: [
          '# retryproof',
          'The four numbers: **duplicate rate** (duplicates intercepted / deliveries, per route), **retry causes** (each duplicate by the answer we gave before: 2xx = the ack was lost, 5xx = our failure), ' +
            '**TTL and lease coverage** (a duplicate\'s age against the TTL; action time against the lease; near 100% means too short), ' +
            'and the **manual-intervention rate** (DLQ arrivals, FAILED and PARKED records and reconciler flags, against deliveries).',
        ].join('\n\n'),
      }),
    );
    dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 3 }));
    dashboard.addWidgets(
      new SingleValueWidget({
        title: 'Duplicate rate over the time range',
        metrics: duplicateRates(),
        setPeriodToTimeRange: true,
        width: 12,
        height: 4,
      }),
      new SingleValueWidget({
        title: 'Manual-intervention rate over the time range',
        metrics: [intervention.rate],
        setPeriodToTimeRange: true,
        width: 12,
        height: 4,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Duplicate rate per route',
        left: duplicateRates(),
        leftYAxis: { min: 0, max: 1, label: 'share of deliveries', showUnits: false },
        leftAnnotations: [{ value: duplicateStormShare, label: 'duplicate storm alarm' }],
        width: 12,
        height: 6,
      }),
      new GraphWidget({
        title: 'Manual-intervention rate',
        left: [intervention.rate],
        leftYAxis: { min: 0, label: 'share of deliveries', showUnits: false },
        right: intervention.parts,
        rightYAxis: { min: 0, label: 'count', showUnits: false },
        width: 12,
        height: 6,
      }),
    );
    for (const route of routes) {
      dashboard.addWidgets(
        new GraphWidget({
          title: `Retry causes: ${route}`,
          left: RETRY_CAUSE_STATUSES.map(({ status, cause }) =>
            metrics.ingest(INGEST_METRIC.retryCause, route, {
              dimensions: { previousStatus: String(status) },
              label: `answered ${status} before (${cause})`,
            }),
          ),
          leftYAxis: { min: 0, label: 'duplicates', showUnits: false },
          width: 8,
          height: 6,
        }),
        answersWidget(metrics, route, `Answers by status: ${route}`, 16),
      );
    }
    dashboard.addWidgets(answersWidget(metrics, UNKNOWN_ROUTE, 'Answers by status: unknown routes', 24));
    dashboard.addWidgets(
      new GraphWidget({
        title: 'TTL coverage: duplicate age as % of TTL',
        left: routes.flatMap((route) =>
          [Stats.p(99), Stats.MAXIMUM].map((statistic) =>
            metrics.ingest(INGEST_METRIC.duplicateAgeShareOfTtl, route, { statistic, label: `${route} ${statistic}` }),
          ),
        ),
        leftYAxis: { min: 0, max: 100, label: '% of TTL', showUnits: false },
        leftAnnotations: [{ value: 100, label: 'TTL' }],
        width: 12,
        height: 6,
      }),
      new GraphWidget({
        title: 'Lease coverage: action time as % of lease',
        left: routes.flatMap((route) =>
          [Stats.p(99), Stats.MAXIMUM].map((statistic) =>
            metrics.executor(EXECUTOR_METRIC.actionShareOfLease, route, { statistic, label: `${route} ${statistic}` }),
          ),
        ),
        leftYAxis: { min: 0, label: '% of lease', showUnits: false },
        leftAnnotations: [{ value: 100, label: 'lease' }],
        width: 12,
        height: 6,
      }),
    );
    const queues = [
      { queue: props.queue, name: 'queue' },
      { queue: props.deadLetterQueue, name: 'DLQ' },
    ];
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Queue depth (visible messages)',
        left: queues.map(({ queue, name }) =>
          queue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD, label: name }),
        ),
        leftYAxis: { min: 0, showUnits: false },
        width: 12,
        height: 6,
      }),
      new GraphWidget({
        title: 'Oldest message age (seconds)',
        left: queues.map(({ queue, name }) =>
          queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD, label: name }),
        ),
        leftYAxis: { min: 0, showUnits: false },
        leftAnnotations: [{ value: retryBudget.seconds, label: `alarm: longest retry budget (${retryBudget.seconds} s)` }],
        width: 12,
        height: 6,
      }),
    );
    const functions = [
      { fn: props.ingest, name: 'ingest' },
      { fn: props.executor, name: 'executor' },
      { fn: props.reconciler, name: 'reconciler' },
    ];
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Lambda errors',
        left: functions.map(({ fn, name }) => fn.metricErrors({ statistic: Stats.SUM, period: DEFAULT_PERIOD, label: name })),
        leftYAxis: { min: 0, showUnits: false },
        width: 8,
        height: 6,
      }),
      new GraphWidget({
        title: 'Lambda throttles',
        left: functions.map(({ fn, name }) => fn.metricThrottles({ statistic: Stats.SUM, period: DEFAULT_PERIOD, label: name })),
        leftYAxis: { min: 0, showUnits: false },
        width: 8,
        height: 6,
      }),
      new GraphWidget({
        title: 'Lambda duration p50 and p99 (ms)',
        left: functions.flatMap(({ fn, name }) =>
          [Stats.p(50), Stats.p(99)].map((statistic) =>
            fn.metricDuration({ statistic, period: DEFAULT_PERIOD, label: `${name} ${statistic}` }),
          ),
        ),
        leftYAxis: { min: 0, showUnits: false },
        width: 8,
        height: 6,
      }),
    );
    this.dashboard = dashboard;
  }
}

/**
 * The alarms that watch the reconciler itself. Its findings alarm reads only what a run
 * reports, and keeps the last verdict through silence, so a reconciler that never runs or
 * always crashes would look clean for weeks. These say so: its errors, its throttles, the
 * schedule failing to invoke it, and the heartbeat, a run that completed (`ReconcilerRuns`),
 * whose absence is the one signal that covers every way a run can fail to happen.
 */
function addReconcilerHeartbeat(scope: Construct, addAlarm: (alarmId: string, spec: AlarmSpec) => void, props: ObservabilityProps): void {
  const hours = Math.max(HEARTBEAT_MIN_HOURS, Math.ceil((2 * props.reconcileEveryMinutes) / 60));
  addAlarm('ReconcilerNoRun', {
    name: 'reconciler-no-run',
    description:
      `No reconciler run has completed for ${hours} hours: stuck work is not re-enqueued, duplicate effects are not reversed, and the findings alarm sees nothing to report. ` +
      'First look at the reconciler-errors, reconciler-throttled and reconcile-schedule-failed alarms and the reconciler\'s log; the next run that completes clears this alarm.',
    // One data point per clock hour; an hour without a completed run is missing data, and
    // missing counts as breaching, so the alarm needs no run to fire: its whole point.
    metric: props.metrics.reconciler(RECONCILER_METRIC.runs, { period: Duration.hours(1) }),
    threshold: 1,
    below: true,
    evaluationPeriods: hours,
    treatMissingData: TreatMissingData.BREACHING,
    recovers: true,
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

/** Answers by status code, one line per status in {@link ANSWER_STATUSES}, for one `route` dimension value. */
function answersWidget(metrics: ReceiverMetrics, route: string, title: string, width: number): GraphWidget {
  return new GraphWidget({
    title,
    left: ANSWER_STATUSES.map((status) =>
      metrics.ingest(INGEST_METRIC.answers, route, { dimensions: { status: String(status) }, label: String(status) }),
    ),
    leftYAxis: { min: 0, label: 'answers', showUnits: false },
    width,
    height: 6,
  });
}

/**
 * The manual-intervention rate: (DLQ arrivals + FAILED + PARKED records + reconciler
 * needs-attention) / deliveries, over all routes, and each part summed over the routes.
 * A route that had nothing in a period has no data point there; FILL counts it as 0.
 * Routes are numbered in the ids (`dlq0`), because a route's name may hold a dash.
 */
function interventionExpressions(metrics: ReceiverMetrics, routes: readonly string[]): { rate: MathExpression; parts: MathExpression[] } {
  const sumOver = (label: string, prefix: string, metricOf: (route: string) => IMetric) => {
    const usingMetrics = Object.fromEntries(routes.map((route, i) => [`${prefix}${i}`, metricOf(route)]));
    return new MathExpression({
      expression: Object.keys(usingMetrics).map((id) => `FILL(${id}, 0)`).join(' + '),
      usingMetrics,
      label,
      period: DEFAULT_PERIOD,
    });
  };
  const dlq = sumOver('DLQ arrivals', 'dlq', (route) => metrics.executor(EXECUTOR_METRIC.dlqArrivals, route));
  const failed = sumOver('FAILED', 'failed', (route) => metrics.executor(EXECUTOR_METRIC.failed, route));
  const parked = sumOver('PARKED', 'parked', (route) => metrics.executor(EXECUTOR_METRIC.parked, route));
  const deliveries = sumOver('deliveries', 'deliveries', (route) => metrics.ingest(INGEST_METRIC.deliveries, route));
  const attention = new MathExpression({
    expression: 'FILL(needsAttention, 0)',
    usingMetrics: { needsAttention: metrics.reconciler(RECONCILER_METRIC.needsAttention) },
    label: 'reconciler needs attention',
    period: DEFAULT_PERIOD,
  });
  const rate = new MathExpression({
    // A period with interventions but no deliveries (a redrive, a late reconciler run) shows 0
    // here rather than a division by zero; the parts on the right axis still show it.
    expression: 'IF(deliveries > 0, (dlq + failed + parked + attention) / deliveries, 0)',
    usingMetrics: { dlq, failed, parked, attention, deliveries },
    label: 'manual-intervention rate',
    period: DEFAULT_PERIOD,
  });
  return { rate, parts: [dlq, failed, parked, attention] };
}
