import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Construct } from 'constructs';
import type { ResolvedConfig } from '../../lambdas/config/resolve-config.ts';
import { INGEST_METRIC } from '../../lambdas/observability/metric-catalogue.ts';
import { alarmName } from '../stateful/alarm-topic.ts';
import type { ObservabilityProps } from './observability.ts';
import { DEFAULT_PERIOD } from './retryproof-metrics.ts';
import { addReconcilerFindingsAlarm, addReconcilerHeartbeat } from './reconciler-alarms.ts';
import { signatureRejectionAlarm } from './signature-rejection-alarm.ts';
import { DLQ_OLDEST_DAYS, QUEUE_PERIOD, ageLimitText } from './watched-queues.ts';
import { DLQ_RETENTION_SECONDS } from '../../lambdas/config/route-config.ts';
import type { WatchedQueue } from './watched-queues.ts';

/** Minutes in a row the oldest message must be older than its retries allow before anyone is woken. */
const OLDEST_MESSAGE_MINUTES = 3;
/**
 * A rate-limited route's backlog alarm fires when its queue holds more work than the limit
 * runs in this long: work then waits over an hour for its turn, and a backlog that only grows
 * means the sender sends faster than the limit will ever run.
 */
export const BACKLOG_HORIZON_SECONDS = 3600;
/** Minutes in a row over that before it fires: a burst the limit drains within the hour is no page. */
export const BACKLOG_MINUTES = 15;

export { FINDINGS_QUERY } from './reconciler-alarms.ts';

/** One alarm, as this construct builds them all: above a threshold, notifying the topic. */
export interface AlarmSpec {
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
  /** Whether INSUFFICIENT_DATA is the problem itself, and so notifies too. @default false */
  readonly silenceNotifies?: boolean;
}

export type AddAlarm = (alarmId: string, spec: AlarmSpec) => void;

/**
 * Every alarm of a receiver (docs/operating.md, "Metrics and alarms"), each notifying the alarm
 * topic: the DLQ, each route's breaker, duplicate storms and signature rejections, the
 * reconciler's findings and its own health (reconciler-alarms.ts), the API's 5xx, each work queue's oldest message
 * (and a rate-limited route's backlog), and the executor's errors. Built in `scope`, the
 * Observability construct, under the ids they always had there, so an update keeps every alarm.
 */
export function receiverAlarms(scope: Construct, props: ObservabilityProps, queues: readonly WatchedQueue[]): Alarm[] {
  const alarms: Alarm[] = [];
  const addAlarm = alarmMaker(scope, props, alarms);
  addDeadLetterAlarms(addAlarm, props);
  addRouteAlarms(addAlarm, props);
  addReconcilerFindingsAlarm(addAlarm, props);
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
  addWorkQueueAlarms(addAlarm, queues, props.resolved);
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
  addReconcilerHeartbeat(scope, addAlarm, props);
  return alarms;
}

/** The one way this construct makes an alarm: above a threshold, notifying the topic, kept in `alarms`. */
function alarmMaker(scope: Construct, props: ObservabilityProps, alarms: Alarm[]): AddAlarm {
  const action = new SnsAction(props.alarmTopic);
  return (alarmId, spec) => {
    const alarm = new Alarm(scope, alarmId, {
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
    if (spec.silenceNotifies === true) alarm.addInsufficientDataAction(action);
    alarms.push(alarm);
  };
}

/** A dead letter arrived, and one is about to be deleted by SQS. */
function addDeadLetterAlarms(addAlarm: AddAlarm, props: ObservabilityProps): void {
  addAlarm('DlqNotEmpty', {
    name: 'dlq-not-empty',
    description:
      'The dead-letter queue holds a message: a recorded delivery could not be executed and needs a person. ' +
      'First read the message (it carries the whole operation context) and the executor logs; fix the cause, then start a DLQ redrive in the SQS console.',
    metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD }),
    threshold: 0,
    // Silence keeps the last verdict: only a published 0 says the DLQ was emptied, so no OK
    // notice comes from a gap in SQS's metrics (docs/architecture.md, "Metrics and alarms").
    treatMissingData: TreatMissingData.IGNORE,
    recovers: true,
  });
  addAlarm('DlqOldestMessage', {
    name: 'dlq-oldest-message',
    description:
      `A dead letter has waited in the DLQ for over ${DLQ_OLDEST_DAYS} days, and SQS deletes it ${DLQ_RETENTION_SECONDS / 86_400} days after it was first sent. ` +
      'Its record stays FAILED in the table, where `retryproof redrive` still finds it, but the copy and its operation context go: read it now, fix the cause, then redrive the DLQ.',
    // For a DLQ the metric is "the longest time that a message has been in the queue" (SQS
    // Developer Guide, "Available CloudWatch metrics for Amazon SQS").
    metric: props.deadLetterQueue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period: DEFAULT_PERIOD }),
    threshold: DLQ_OLDEST_DAYS * 86_400,
    treatMissingData: TreatMissingData.IGNORE,
    recovers: true,
  });
}

/**
 * Each route's alarms: its breaker, its duplicate storms and its signature rejections. The
 * ingest sends no notice of a breaker itself (it has no SNS client); these alarms do, and point
 * to where the notice is kept.
 */
function addRouteAlarms(addAlarm: AddAlarm, props: ObservabilityProps): void {
  const { resolved, metrics } = props;
  const { duplicateStormShare, duplicateStormMinDeliveries } = resolved.alarms;
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
}

/**
 * The oldest message of each work queue against its age limit (watched-queues.ts): past it,
 * the message is not being retried but waits for an executor that is not picking it up.
 */
function addWorkQueueAlarms(addAlarm: AddAlarm, queues: readonly WatchedQueue[], resolved: ResolvedConfig): void {
  const [shared, ...own] = queues;
  if (shared === undefined) throw new Error('no work queue to watch');
  const visibility = resolved.queue.visibilityTimeoutSeconds;
  addAlarm('OldestMessageOverRetries', {
    name: 'queue-oldest-over-retries',
    description:
      `For ${OLDEST_MESSAGE_MINUTES} minutes a message has waited in the work queue longer than the longest retry budget takes ` +
      `(${ageLimitText(shared.ageLimit, visibility)}), which retries and locked hand-backs never reach: ` +
      'the executor is not keeping up, is throttled or is not running. Check the executor errors, throttles and concurrency first.',
    metric: shared.queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD }),
    threshold: shared.ageLimit.seconds,
    evaluationPeriods: OLDEST_MESSAGE_MINUTES,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    recovers: true,
  });
  own.forEach((watched, i) => {
    addRouteQueueAlarms(addAlarm, watched, i, resolved);
  });
}

/**
 * The alarms of a route's own queue: its oldest message against the route's age limit, as the
 * shared queue's; and, for a rate-limited route, its backlog against what the limit runs in
 * {@link BACKLOG_HORIZON_SECONDS}. Ids and names carry the route's name, so they stay the
 * route's whatever other routes come and go.
 */
function addRouteQueueAlarms(addAlarm: AddAlarm, watched: WatchedQueue, i: number, resolved: ResolvedConfig): void {
  const route = watched.owner;
  if (route === undefined) throw new Error('the shared queue has no route of its own');
  const { queue, ageLimit } = watched;
  const concurrency = route.concurrency ?? resolved.queue.maxConcurrency;
  addAlarm(`OldestMessageOverRetries-${route.name}`, {
    name: `queue-oldest-over-retries-${route.name}`,
    description:
      `For ${OLDEST_MESSAGE_MINUTES} minutes a message has waited in route "${route.name}"'s own queue longer than its retry budget takes ` +
      `(${ageLimitText(ageLimit, resolved.queue.visibilityTimeoutSeconds)}), which retries${ageLimit.deferralSeconds === 0 ? '' : ', deferrals'} and locked hand-backs never reach: ` +
      `the executor is not keeping up with this route at its concurrency of ${concurrency}, is throttled or is not running. ` +
      `Check the executor errors and throttles and this route's backlog on the dashboard first, then raise the route's concurrency if it is only behind.`,
    metric: queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD }),
    threshold: ageLimit.seconds,
    evaluationPeriods: OLDEST_MESSAGE_MINUTES,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    recovers: true,
  });
  const limit = route.rateLimit;
  if (limit === undefined) return;
  const threshold = Math.ceil((limit.count * BACKLOG_HORIZON_SECONDS) / limit.perSeconds);
  addAlarm(`RouteBacklog-${route.name}`, {
    name: `route-backlog-${route.name}`,
    description:
      `For ${BACKLOG_MINUTES} minutes route "${route.name}"'s own queue has held more work than its rate limit of ${limit.text} runs in an hour ` +
      `(over ${threshold} messages visible, in flight or delayed until their turn), so work arrives faster than the limit lets it run and waits ever longer, RECEIVED and never failed for waiting. ` +
      'Check the sender\'s volume and this route\'s backlog on the dashboard first, then raise the rate limit if what the action calls allows it, or ask the sender to slow down.',
    metric: new MathExpression({
      // SQS publishes nothing for a queue idle for hours; FILL reads that as an empty queue.
      expression: `FILL(visible${i}, 0) + FILL(inFlight${i}, 0) + FILL(delayed${i}, 0)`,
      usingMetrics: {
        [`visible${i}`]: queue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD }),
        [`inFlight${i}`]: queue.metricApproximateNumberOfMessagesNotVisible({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD }),
        [`delayed${i}`]: queue.metricApproximateNumberOfMessagesDelayed({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD }),
      },
      label: `backlog, route ${route.name}`,
      period: QUEUE_PERIOD,
    }),
    threshold,
    evaluationPeriods: BACKLOG_MINUTES,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    recovers: true,
  });
}
