import { Duration } from 'aws-cdk-lib';
import {
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  MathExpression,
  SingleValueWidget,
  Stats,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { Alarm, IMetric, IWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { ResolvedConfig } from '../../lambdas/config/resolve-config.ts';
import { EXECUTOR_METRIC, INGEST_METRIC, RECONCILER_METRIC } from '../../lambdas/observability/metric-catalogue.ts';
import type { ObservabilityProps } from './observability.ts';
import { ANSWER_STATUSES, DEFAULT_PERIOD, RETRY_CAUSE_STATUSES, UNKNOWN_ROUTE } from './retryproof-metrics.ts';
import type { ReceiverMetrics } from './retryproof-metrics.ts';
import { QUEUE_PERIOD } from './watched-queues.ts';
import type { WatchedQueue } from './watched-queues.ts';

/**
 * The receiver's one dashboard (docs/operating.md, "Metrics and alarms"): the four numbers
 * (duplicate rate, retry causes, TTL and lease coverage, manual-intervention rate), every
 * alarm's state, the work queues and the DLQ (each route's own queue apart, when routes have
 * one), and the functions. Built in `scope`, the Observability construct, under the id it always had.
 */
export function receiverDashboard(scope: Construct, props: ObservabilityProps, queues: readonly WatchedQueue[], alarms: readonly Alarm[]): Dashboard {
  const { resolved, metrics } = props;
  const routes = resolved.routes.map((r) => r.name);
  const dashboard = new Dashboard(scope, 'Dashboard', {
    dashboardName: props.dashboardName,
    defaultInterval: Duration.hours(3),
  });
  const rows: IWidget[][] = [
    ...summaryRows(metrics, routes, resolved.alarms.duplicateStormShare, alarms),
    ...routes.map((route) => retryCauseRow(metrics, route)),
    [answersWidget(metrics, UNKNOWN_ROUTE, 'Answers by status: unknown routes', 24)],
    coverageRow(metrics, routes),
    ...queueRows(queues, props.deadLetterQueue, resolved),
    functionRow(props),
  ];
  // One row per addWidgets call, as the dashboard has always been laid out.
  for (const row of rows) dashboard.addWidgets(...row);
  return dashboard;
}

/** The four numbers explained, every alarm's state, then the duplicate and manual-intervention rates: over the time range, and graphed. */
function summaryRows(metrics: ReceiverMetrics, routes: readonly string[], duplicateStormShare: number, alarms: readonly Alarm[]): IWidget[][] {
  const intervention = interventionExpressions(metrics, routes);
  const text = new TextWidget({
    width: 24,
    height: 3,
    markdown: [
      '# retryproof',
      'The four numbers: **duplicate rate** (duplicates intercepted / deliveries, per route), **retry causes** (each duplicate by the answer we gave before: 2xx = the ack was lost, 5xx = our failure), ' +
        '**TTL and lease coverage** (a duplicate\'s age against the TTL; action time against the lease; near 100% means too short), ' +
        'and the **manual-intervention rate** (DLQ arrivals, FAILED and PARKED records and reconciler flags, against deliveries).',
    ].join('\n\n'),
  });
  const overRange = [
    new SingleValueWidget({
      title: 'Duplicate rate over the time range',
      metrics: duplicateRates(metrics, routes),
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
  ];
  const graphed = [
    new GraphWidget({
      title: 'Duplicate rate per route',
      left: duplicateRates(metrics, routes),
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
  ];
  return [[text], [new AlarmStatusWidget({ title: 'Alarms', alarms: [...alarms], width: 24, height: 3 })], overRange, graphed];
}

/** Each route's duplicate rate, duplicates over deliveries, one line per route. */
function duplicateRates(metrics: ReceiverMetrics, routes: readonly string[]): MathExpression[] {
  return routes.map(
    (route, i) =>
      new MathExpression({
        // No duplicate in a period leaves no data point; FILL makes that a rate of 0.
        expression: `FILL(duplicates${i}, 0) / deliveries${i}`,
        usingMetrics: {
          [`duplicates${i}`]: metrics.ingest(INGEST_METRIC.duplicates, route),
          [`deliveries${i}`]: metrics.ingest(INGEST_METRIC.deliveries, route),
        },
        label: route,
        period: DEFAULT_PERIOD,
      }),
  );
}

/** A route's retry causes beside its answers by status. */
function retryCauseRow(metrics: ReceiverMetrics, route: string): IWidget[] {
  return [
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
  ];
}

/** TTL coverage (a duplicate's age against its TTL) beside lease coverage (action time against the lease), p99 and maximum per route. */
function coverageRow(metrics: ReceiverMetrics, routes: readonly string[]): IWidget[] {
  const statistics = [Stats.p(99), Stats.MAXIMUM];
  return [
    new GraphWidget({
      title: 'TTL coverage: duplicate age as % of TTL',
      left: routes.flatMap((route) =>
        statistics.map((statistic) => metrics.ingest(INGEST_METRIC.duplicateAgeShareOfTtl, route, { statistic, label: `${route} ${statistic}` })),
      ),
      leftYAxis: { min: 0, max: 100, label: '% of TTL', showUnits: false },
      leftAnnotations: [{ value: 100, label: 'TTL' }],
      width: 12,
      height: 6,
    }),
    new GraphWidget({
      title: 'Lease coverage: action time as % of lease',
      left: routes.flatMap((route) =>
        statistics.map((statistic) => metrics.executor(EXECUTOR_METRIC.actionShareOfLease, route, { statistic, label: `${route} ${statistic}` })),
      ),
      leftYAxis: { min: 0, label: '% of lease', showUnits: false },
      leftAnnotations: [{ value: 100, label: 'lease' }],
      width: 12,
      height: 6,
    }),
  ];
}

/**
 * The work queues and the DLQ side by side; then, with routes on queues of their own, each
 * work queue's backlog apart (workQueueWidgets).
 */
function queueRows(queues: readonly WatchedQueue[], deadLetterQueue: IQueue, resolved: ResolvedConfig): IWidget[][] {
  const [shared] = queues;
  if (shared === undefined) throw new Error('no work queue to watch');
  const isolated = queues.length > 1;
  const lines = [...queues.map((w) => ({ queue: w.queue, name: w.label })), { queue: deadLetterQueue, name: 'DLQ' }];
  const sharedLimit = shared.ageLimit.seconds;
  const sideBySide = [
    new GraphWidget({
      title: 'Queue depth (visible messages)',
      left: lines.map(({ queue, name }) =>
        queue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD, label: name }),
      ),
      leftYAxis: { min: 0, showUnits: false },
      width: 12,
      height: 6,
    }),
    new GraphWidget({
      title: 'Oldest message age (seconds)',
      left: lines.map(({ queue, name }) =>
        queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD, label: name }),
      ),
      leftYAxis: { min: 0, showUnits: false },
      leftAnnotations: [{ value: sharedLimit, label: `alarm${isolated ? ', shared queue' : ''}: longest retry budget (${sharedLimit} s)` }],
      width: 12,
      height: 6,
    }),
  ];
  return isolated ? [sideBySide, workQueueWidgets(queues, resolved)] : [sideBySide];
}

/** The three functions' errors, throttles and duration. */
function functionRow(props: ObservabilityProps): IWidget[] {
  const functions = [
    { fn: props.ingest, name: 'ingest' },
    { fn: props.executor, name: 'executor' },
    { fn: props.reconciler, name: 'reconciler' },
  ];
  return [
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
  ];
}

/**
 * With routes on queues of their own: a note on what the lines mean and which routes share the
 * shared queue, then each work queue's backlog (visible, in flight, delayed: for a rate-limited
 * route, work waiting for its turn) and its oldest message against its alarm's age limit.
 */
function workQueueWidgets(queues: readonly WatchedQueue[], resolved: ResolvedConfig): IWidget[] {
  const [shared] = queues;
  const sharing = shared === undefined || shared.routes.length === 0 ? 'none (it holds only work from before the routes moved)' : shared.routes.map((r) => r.name).join(', ');
  const note = new TextWidget({
    width: 24,
    height: 2,
    markdown:
      '## Work queues\n' +
      'Each route with a queue of its own (`ownQueue`, `rateLimit` or `concurrency`) is graphed apart: messages **visible** (waiting for the executor), ' +
      '**in flight** (being run, or handed back until a lease ends) and **delayed** (a rate-limited route\'s work waiting for its turn), and the age of the oldest. ' +
      `Routes sharing the shared queue: ${sharing}.`,
  });
  const widgets = queues.map((watched) => {
    const { queue, owner, ageLimit } = watched;
    const metric = (label: string) => ({ statistic: Stats.MAXIMUM, period: QUEUE_PERIOD, label });
    const title =
      owner === undefined
        ? `Backlog: ${watched.label}`
        : `Backlog: ${watched.label} (own queue, concurrency ${owner.concurrency ?? resolved.queue.maxConcurrency}${owner.rateLimit === undefined ? '' : `, ${owner.rateLimit.text}`})`;
    return new GraphWidget({
      title,
      left: [
        queue.metricApproximateNumberOfMessagesVisible(metric('visible')),
        queue.metricApproximateNumberOfMessagesNotVisible(metric('in flight')),
        queue.metricApproximateNumberOfMessagesDelayed(metric(watched.routes.some((r) => r.rateLimit !== undefined) ? 'delayed (waiting for the rate limit)' : 'delayed')),
      ],
      leftYAxis: { min: 0, label: 'messages', showUnits: false },
      right: [queue.metricApproximateAgeOfOldestMessage(metric('oldest message age (s)'))],
      rightYAxis: { min: 0, label: 'seconds', showUnits: false },
      rightAnnotations: [{ value: ageLimit.seconds, label: `alarm (${ageLimit.seconds} s)` }],
      width: 12,
      height: 6,
    });
  });
  return [note, ...widgets];
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
