import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { METRICS_NAMESPACE, SERVICE } from '../../lambdas/observability/metric-catalogue.ts';
import { FINDINGS_QUERY } from '../../lib/stateless/observability.ts';
import { demoConfig as config } from './fixtures/demo-config.ts';
import { dashboardWidgets, logicalIdOf, synthesize } from './stack-fixture.ts';
import type { DashboardWidget, SynthesizedApp } from './stack-fixture.ts';

/** One line of a graph or single-value widget: a metric, or a math expression over others. */
interface WidgetMetric {
  readonly namespace?: string;
  readonly name?: string;
  readonly dimensions?: Record<string, string>;
  readonly expression?: string;
  readonly id?: string;
  readonly label?: string;
  readonly stat?: string;
  readonly period?: number;
  readonly visible?: boolean;
  readonly yAxis?: string;
}

/** A widget's `metrics`: `[namespace, name, dim, value, ..., options?]` or `[{ expression, ... }]`. */
function metricsOf(widget: DashboardWidget): WidgetMetric[] {
  return (widget.properties.metrics ?? []).map((entry) => {
    const last = entry[entry.length - 1];
    const options = (typeof last === 'object' ? last : {}) as WidgetMetric;
    if (typeof entry[0] === 'object') return options;
    const [namespace, name, ...rest] = entry.filter((e) => typeof e === 'string');
    const dimensions: Record<string, string> = {};
    for (let i = 0; i < rest.length; i += 2) dimensions[rest[i]!] = rest[i + 1]!;
    return { ...options, namespace, name, dimensions };
  });
}

/** A Retryproof metric as the functions emit it: the namespace, the name and the exact dimension set. */
const emitted = (name: string, service: string, dimensions: Record<string, string>) => ({
  namespace: METRICS_NAMESPACE,
  name,
  dimensions: { service, ...dimensions },
});

type Resource = { Properties: Record<string, unknown> };

/** An alarm's description as text; a reference in it (a log group's name) reads `<Ref LogicalId>`. */
function descriptionOf(alarm: Resource): string {
  const description = alarm.Properties.AlarmDescription as string | { 'Fn::Join': [string, unknown[]] };
  if (typeof description === 'string') return description;
  const [separator, parts] = description['Fn::Join'];
  return parts.map((part) => (typeof part === 'string' ? part : `<Ref ${(part as { Ref: string }).Ref}>`)).join(separator);
}

/** Alarms that report an event, not a state: they notify on ALARM only, since their OK does not mean it is over. */
const EVENT_ALARMS = /route-paused|breaker-alert|reconciler-throttled|reconcile-schedule-failed/;

describe('Observability, built from retryproof.config.ts', () => {
  const resolved = resolveConfig(config);
  const routes = resolved.routes.map((r) => r.name);
  let built: SynthesizedApp;
  let widgets: DashboardWidget[];
  let topic: { Ref: string };
  const ref = (path: string) => `<Ref ${logicalIdOf(built, path)}>`;
  const queueName = (path: string) => `<GetAtt ${logicalIdOf(built, path)}.QueueName>`;

  const widget = (title: string): DashboardWidget => {
    const found = widgets.filter((w) => w.properties.title === title);
    expect(found, `widget "${title}"`).toHaveLength(1);
    return found[0]!;
  };
  /** The lines a reader sees, without the `visible: false` inputs of expressions. */
  const shown = (title: string) => metricsOf(widget(title)).filter((m) => m.visible !== false);
  /** The metric or expression with this id in the widget. */
  const byId = (title: string, id: string): WidgetMetric => {
    const found = metricsOf(widget(title)).find((m) => m.id === id);
    if (found === undefined) throw new Error(`no metric with id ${id} in "${title}"`);
    return found;
  };
  const alarmNamed = (name: string): Record<string, unknown> => {
    const alarms = Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[];
    const found = alarms.filter((a) => a.Properties.AlarmName === `Retryproof-${name}`);
    expect(found, `alarm Retryproof-${name}`).toHaveLength(1);
    return found[0]!.Properties;
  };
  /** The metrics of a math alarm, by id. */
  const alarmMetrics = (name: string) =>
    Object.fromEntries((alarmNamed(name).Metrics as { Id: string }[]).map((m) => [m.Id, m as Record<string, unknown>]));
  const metricStat = (metricName: string, dimensions: Record<string, string>, period = 300) => ({
    MetricStat: {
      Metric: {
        Namespace: METRICS_NAMESPACE,
        MetricName: metricName,
        Dimensions: Object.entries(dimensions)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([Name, Value]) => ({ Name, Value })),
      },
      Period: period,
      Stat: 'Sum',
    },
    ReturnData: false,
  });

  beforeAll(() => {
    // Prepare: one synth for the whole file; cdk-nag runs in it.
    built = synthesize(config);
    widgets = dashboardWidgets(built, 'Observability/Dashboard');
    topic = { Ref: logicalIdOf(built, 'Alarms/Topic') };
  });

  describe('the dashboard', () => {
    it('is one dashboard named after the stack and its region (dashboards are account-wide), opening with a text widget that explains the four numbers', () => {
      built.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
      built.template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
        DashboardName: { 'Fn::Join': ['', ['Retryproof-', { Ref: 'AWS::Region' }]] },
      });
      const [text] = widgets;
      expect(text!.type).toBe('text');
      for (const words of ['duplicate rate', 'retry causes', 'TTL and lease coverage', 'manual-intervention rate']) {
        expect(text!.properties.markdown).toContain(words);
      }
    });

    it('graphs the duplicate rate per route as FILL(DuplicatesIntercepted, 0) / Deliveries, with the storm threshold drawn in', () => {
      const title = 'Duplicate rate per route';
      expect(shown(title).map((m) => [m.label, m.expression])).toEqual(
        routes.map((route, i) => [route, `FILL(duplicates${i}, 0) / deliveries${i}`]),
      );
      routes.forEach((route, i) => {
        expect(byId(title, `duplicates${i}`)).toMatchObject({
          ...emitted('DuplicatesIntercepted', SERVICE.ingest, { route }),
          stat: 'Sum',
        });
        expect(byId(title, `deliveries${i}`)).toMatchObject({ ...emitted('Deliveries', SERVICE.ingest, { route }), stat: 'Sum' });
      });
      expect(widget(title).properties.annotations?.horizontal).toEqual([
        expect.objectContaining({ value: resolved.alarms.duplicateStormShare }),
      ]);
    });

    it('shows the duplicate rate and the manual-intervention rate over the whole time range as single values', () => {
      const duplicates = widget('Duplicate rate over the time range');
      expect(duplicates.type).toBe('metric');
      expect(duplicates.properties.setPeriodToTimeRange).toBe(true);
      expect(shown('Duplicate rate over the time range').map((m) => m.expression)).toEqual(
        routes.map((_, i) => `FILL(duplicates${i}, 0) / deliveries${i}`),
      );
      const manual = widget('Manual-intervention rate over the time range');
      expect(manual.properties.setPeriodToTimeRange).toBe(true);
      expect(shown('Manual-intervention rate over the time range').map((m) => m.expression)).toEqual([
        'IF(deliveries > 0, (dlq + failed + parked + attention) / deliveries, 0)',
      ]);
    });

    it('graphs the manual-intervention rate as (DlqArrivals + Failed + Parked + ReconcilerNeedsAttention) / Deliveries over all routes', () => {
      const title = 'Manual-intervention rate';
      const [rate, ...parts] = shown(title);
      expect(rate!.expression).toBe('IF(deliveries > 0, (dlq + failed + parked + attention) / deliveries, 0)');
      expect(parts.map((p) => [p.id, p.yAxis])).toEqual([
        ['dlq', 'right'],
        ['failed', 'right'],
        ['parked', 'right'],
        ['attention', 'right'],
      ]);
      const perRoute = (id: string) => routes.map((_, i) => `FILL(${id}${i}, 0)`).join(' + ');
      for (const [id, metricName, service] of [
        ['dlq', 'DlqArrivals', SERVICE.executor],
        ['failed', 'Failed', SERVICE.executor],
        ['parked', 'Parked', SERVICE.executor],
        ['deliveries', 'Deliveries', SERVICE.ingest],
      ] as const) {
        expect(byId(title, id).expression).toBe(perRoute(id));
        routes.forEach((route, i) => {
          expect(byId(title, `${id}${i}`)).toMatchObject({ ...emitted(metricName, service, { route }), stat: 'Sum' });
        });
      }
      expect(byId(title, 'attention').expression).toBe('FILL(needsAttention, 0)');
      expect(byId(title, 'needsAttention')).toMatchObject({ ...emitted('ReconcilerNeedsAttention', SERVICE.reconciler, {}), stat: 'Sum' });
    });

    it('graphs the retry causes of each route: RetryCause by previousStatus 202 (ack lost), 500 and 503 (our failure)', () => {
      for (const route of routes) {
        expect(shown(`Retry causes: ${route}`)).toEqual(
          [
            [202, 'ack lost'],
            [500, 'our failure'],
            [503, 'our failure'],
          ].map(([status, cause]) => ({
            ...emitted('RetryCause', SERVICE.ingest, { route, previousStatus: String(status) }),
            label: `answered ${status} before (${cause})`,
            stat: 'Sum',
          })),
        );
      }
    });

    it('graphs Answers by status code for each route and for unknown routes', () => {
      const statuses = ['200', '202', '400', '401', '404', '405', '409', '413', '422', '500', '503'];
      for (const [route, title] of [...routes.map((r) => [r, `Answers by status: ${r}`]), ['unknown', 'Answers by status: unknown routes']]) {
        expect(shown(title!)).toEqual(
          statuses.map((status) => ({ ...emitted('Answers', SERVICE.ingest, { route: route!, status }), label: status, stat: 'Sum' })),
        );
      }
    });

    it('graphs TTL coverage (DuplicateAgeShareOfTtl) and lease coverage (ActionShareOfLease) at p99 and maximum per route', () => {
      for (const [title, metricName, service] of [
        ['TTL coverage: duplicate age as % of TTL', 'DuplicateAgeShareOfTtl', SERVICE.ingest],
        ['Lease coverage: action time as % of lease', 'ActionShareOfLease', SERVICE.executor],
      ] as const) {
        expect(shown(title)).toEqual(
          routes.flatMap((route) =>
            ['p99', 'Maximum'].map((stat) => ({ ...emitted(metricName, service, { route }), label: `${route} ${stat}`, stat })),
          ),
        );
        expect(widget(title).properties.annotations?.horizontal).toEqual([expect.objectContaining({ value: 100 })]);
      }
    });

    it('graphs depth and oldest-message age of the queue and the DLQ, the age against the oldest-message alarm\'s threshold', () => {
      const sqs = (metricName: string, path: string, label: string) => ({
        namespace: 'AWS/SQS',
        name: metricName,
        dimensions: { QueueName: queueName(path) },
        label,
        stat: 'Maximum',
        period: 60,
      });
      expect(shown('Queue depth (visible messages)')).toEqual([
        sqs('ApproximateNumberOfMessagesVisible', 'Work/Queue', 'queue'),
        sqs('ApproximateNumberOfMessagesVisible', 'Work/DeadLetterQueue', 'DLQ'),
      ]);
      expect(shown('Oldest message age (seconds)')).toEqual([
        sqs('ApproximateAgeOfOldestMessage', 'Work/Queue', 'queue'),
        sqs('ApproximateAgeOfOldestMessage', 'Work/DeadLetterQueue', 'DLQ'),
      ]);
      expect(widget('Oldest message age (seconds)').properties.annotations?.horizontal).toEqual([
        expect.objectContaining({ value: 1875 }),
      ]);
    });

    it('graphs errors, throttles and duration p50 and p99 of all three functions', () => {
      const lambda = (metricName: string, id: string, stat: string, label: string) => ({
        namespace: 'AWS/Lambda',
        name: metricName,
        dimensions: { FunctionName: ref(id) },
        label,
        stat,
      });
      const functions = [
        ['Ingest', 'ingest'],
        ['Executor', 'executor'],
        ['Reconciler', 'reconciler'],
      ] as const;
      expect(shown('Lambda errors')).toEqual(functions.map(([id, name]) => lambda('Errors', id, 'Sum', name)));
      expect(shown('Lambda throttles')).toEqual(functions.map(([id, name]) => lambda('Throttles', id, 'Sum', name)));
      expect(shown('Lambda duration p50 and p99 (ms)')).toEqual(
        functions.flatMap(([id, name]) => ['p50', 'p99'].map((stat) => lambda('Duration', id, stat, `${name} ${stat}`))),
      );
    });

    it('shows the state of every alarm in the stack', () => {
      const alarms = widget('Alarms');
      expect(alarms.type).toBe('alarm');
      const ids = Object.keys(built.template.findResources('AWS::CloudWatch::Alarm'));
      expect(alarms.properties.alarms).toHaveLength(ids.length);
      for (const id of ids) expect(alarms.properties.alarms!.join(' ')).toContain(`<GetAtt ${id}.Arn>`);
    });

    it('fits the 24-column grid', () => {
      for (const w of widgets) expect(w.width).toBeLessThanOrEqual(24);
    });
  });

  describe('the alarms', () => {
    it('are exactly these, each named with the stack prefix the alarm topic lets publish', () => {
      const names = (Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[]).map(
        (a) => a.Properties.AlarmName,
      );
      expect(names.sort()).toEqual(
        [
          'Retryproof-dlq-not-empty',
          'Retryproof-dlq-oldest-message',
          ...routes.map((r) => `Retryproof-route-paused-${r}`),
          ...routes.map((r) => `Retryproof-duplicate-storm-${r}`),
          ...routes.map((r) => `Retryproof-signature-rejections-${r}`),
          'Retryproof-reconciler-findings',
          'Retryproof-reconciler-no-run',
          'Retryproof-reconciler-errors',
          'Retryproof-reconciler-throttled',
          'Retryproof-reconcile-schedule-failed',
          'Retryproof-ingest-5xx',
          'Retryproof-queue-oldest-over-retries',
          'Retryproof-executor-errors',
        ].sort(),
      );
    });

    it('each notify the alarm topic on ALARM, and on OK unless the alarm is an event', () => {
      for (const alarm of Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[]) {
        const { AlarmName: name, AlarmActions, OKActions } = alarm.Properties;
        expect(AlarmActions, String(name)).toEqual([topic]);
        expect(OKActions, String(name)).toEqual(EVENT_ALARMS.test(String(name)) ? undefined : [topic]);
      }
    });

    it('each say in one or two sentences what they mean and what to do first', () => {
      for (const alarm of Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[]) {
        const description = descriptionOf(alarm);
        expect(description.length).toBeLessThanOrEqual(1024);
        expect(description.split(/(?<=\.)\s+(?=[A-Z])/), description).toHaveLength(2);
        expect(description, description).toMatch(/\bfirst\b/i);
      }
    });

    it('notify on INSUFFICIENT_DATA only where silence is the problem: the reconciler heartbeat', () => {
      const silent = (Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[]).filter(
        (a) => a.Properties.InsufficientDataActions !== undefined,
      );
      expect(silent.map((a) => [a.Properties.AlarmName, a.Properties.InsufficientDataActions])).toEqual([['Retryproof-reconciler-no-run', [topic]]]);
    });

    it('fire when a dead letter has waited 7 days, half the DLQ retention, keeping the verdict through silence', () => {
      expect(alarmNamed('dlq-oldest-message')).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(built, 'Work/DeadLetterQueue'), 'QueueName'] } }],
        Statistic: 'Maximum',
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 7 * 86_400,
        TreatMissingData: 'ignore',
      });
    });

    it('fire when the DLQ holds any visible message, and go OK only on a published 0, not on silence', () => {
      expect(alarmNamed('dlq-not-empty')).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(built, 'Work/DeadLetterQueue'), 'QueueName'] } }],
        Statistic: 'Maximum',
        Period: 60,
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'ignore',
      });
    });

    it('fire once per pause of a route: RoutePaused summed over 1 minute above 0, an event', () => {
      for (const route of routes) {
        const alarm = alarmNamed(`route-paused-${route}`);
        expect(alarm).toMatchObject({
          Namespace: METRICS_NAMESPACE,
          MetricName: 'RoutePaused',
          Dimensions: [
            { Name: 'route', Value: route },
            { Name: 'service', Value: SERVICE.ingest },
          ],
          Statistic: 'Sum',
          Period: 60,
          ComparisonOperator: 'GreaterThanThreshold',
          Threshold: 0,
          EvaluationPeriods: 1,
          TreatMissingData: 'notBreaching',
        });
        expect(alarm.AlarmDescription).toContain('event');
      }
    });

    it('fire on a duplicate storm: duplicates over 50% of a route\'s deliveries in 5 minutes, only from 20 deliveries up', () => {
      routes.forEach((route, i) => {
        expect(alarmNamed(`duplicate-storm-${route}`)).toMatchObject({
          ComparisonOperator: 'GreaterThanThreshold',
          Threshold: 0.5,
          EvaluationPeriods: 1,
          TreatMissingData: 'notBreaching',
        });
        const metrics = alarmMetrics(`duplicate-storm-${route}`);
        expect(Object.values(metrics).filter((m) => m.ReturnData === true)).toEqual([
          expect.objectContaining({ Expression: `IF(deliveries${i} >= 20, duplicates${i} / deliveries${i}, 0)` }),
        ]);
        expect(metrics[`deliveries${i}`]).toMatchObject(metricStat('Deliveries', { route, service: SERVICE.ingest }));
        expect(metrics[`duplicates${i}`]).toMatchObject(metricStat('DuplicatesIntercepted', { route, service: SERVICE.ingest }));
      });
    });

    it('fire when a reconciler run reverses, misses, finds orphans or needs attention, and hold that verdict until the next run', () => {
      expect(alarmNamed('reconciler-findings')).toMatchObject({
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'ignore',
      });
      const metrics = alarmMetrics('reconciler-findings');
      expect(Object.values(metrics).filter((m) => m.ReturnData === true)).toEqual([
        expect.objectContaining({ Expression: 'reversed + needsAttention + missing + orphans' }),
      ]);
      for (const [id, metricName] of [
        ['reversed', 'ReconcilerReversed'],
        ['needsAttention', 'ReconcilerNeedsAttention'],
        ['missing', 'ReconcilerMissingEffects'],
        ['orphans', 'ReconcilerOrphans'],
      ]) {
        expect(metrics[id!]).toMatchObject(metricStat(metricName!, { service: SERVICE.reconciler }));
      }
    });

    it('send a person to the report where it is, the reconciler\'s log, with the Logs Insights query that finds it', () => {
      const alarms = Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[];
      const findings = alarms.find((a) => a.Properties.AlarmName === 'Retryproof-reconciler-findings')!;
      const description = descriptionOf(findings);
      expect(description).toContain('not on this topic');
      expect(description.endsWith(`on log group <Ref ${logicalIdOf(built, 'ReconcilerLogs')}>, run ${FINDINGS_QUERY}`)).toBe(true);
      // The handler's log line, and the counts the findings alarm adds up.
      expect(FINDINGS_QUERY).toContain('filter message = "reconciliation report"');
      for (const count of ['reversed', 'missing', 'orphans', 'needsAttention']) expect(FINDINGS_QUERY).toContain(`report.counts.${count} > 0`);
      expect(description).not.toContain('sent to this topic');
    });

    it('fire when no reconciler run completed for 2 hours, and not before the first run: ReconcilerRuns under 1 an hour, missing data missing', () => {
      expect(alarmNamed('reconciler-no-run')).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        MetricName: 'ReconcilerRuns',
        Dimensions: [{ Name: 'service', Value: SERVICE.reconciler }],
        Statistic: 'Sum',
        Period: 3600,
        ComparisonOperator: 'LessThanThreshold',
        Threshold: 1,
        EvaluationPeriods: 2,
        TreatMissingData: 'missing',
      });
      expect(alarmNamed('reconciler-no-run').AlarmDescription).toContain('for 2 hours');
      expect(alarmNamed('reconciler-no-run').AlarmDescription).toContain('INSUFFICIENT_DATA');
    });

    it('fire on any reconciler error, and keep that verdict until the next run', () => {
      expect(alarmNamed('reconciler-errors')).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(built, 'Reconciler') } }],
        Statistic: 'Sum',
        Period: 300,
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'ignore',
      });
    });

    it('fire once on any throttled reconciler invocation, an event', () => {
      expect(alarmNamed('reconciler-throttled')).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(built, 'Reconciler') } }],
        Statistic: 'Sum',
        Period: 300,
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        TreatMissingData: 'notBreaching',
      });
      expect(alarmNamed('reconciler-throttled').AlarmDescription).toContain('event');
    });

    it('fire once when the schedule fails to invoke the reconciler: target errors and dropped invocations of its own schedule group', () => {
      const groups = built.template.findResources('AWS::Scheduler::ScheduleGroup') as Record<string, Resource>;
      const group = groups[logicalIdOf(built, 'Reconcile/Group')]!.Properties.Name as string;
      built.template.hasResourceProperties('AWS::Scheduler::Schedule', { GroupName: group });
      expect(alarmNamed('reconcile-schedule-failed')).toMatchObject({
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      const metrics = alarmMetrics('reconcile-schedule-failed');
      expect(Object.values(metrics).filter((m) => m.ReturnData === true)).toEqual([
        expect.objectContaining({ Expression: 'FILL(targetErrors, 0) + FILL(dropped, 0)' }),
      ]);
      for (const [id, metricName] of [
        ['targetErrors', 'TargetErrorCount'],
        ['dropped', 'InvocationDroppedCount'],
      ]) {
        expect(metrics[id!]).toMatchObject({
          MetricStat: {
            Metric: { Namespace: 'AWS/Scheduler', MetricName: metricName, Dimensions: [{ Name: 'ScheduleGroup', Value: group }] },
            Period: 300,
            Stat: 'Sum',
          },
          ReturnData: false,
        });
      }
    });

    it('fire on any 5xx the webhook API answered in 5 minutes, counted by API Gateway', () => {
      expect(alarmNamed('ingest-5xx')).toMatchObject({
        Namespace: 'AWS/ApiGateway',
        MetricName: '5xx',
        Dimensions: [{ Name: 'ApiId', Value: { Ref: logicalIdOf(built, 'Webhooks/Api') } }],
        Statistic: 'Sum',
        Period: 300,
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
    });

    it('fire when the oldest queued message has outlived a whole retry budget (5 x (45 s lease + 330 s visibility)) for 3 minutes', () => {
      // Prepare: the numbers an ordinary retry can reach. Each retry hides its message for the
      // visibility timeout, so a 45 s threshold fired on the first retry.
      expect(resolved.queue.visibilityTimeoutSeconds).toBe(330);
      expect(resolved.routes.map((r) => [r.maxAttempts, r.leaseSeconds])).toEqual([
        [5, 45],
        [5, 45],
      ]);
      const alarm = alarmNamed('queue-oldest-over-retries');
      expect(alarm).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(built, 'Work/Queue'), 'QueueName'] } }],
        Statistic: 'Maximum',
        Period: 60,
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 1875,
        EvaluationPeriods: 3,
        TreatMissingData: 'notBreaching',
      });
      // A message retried through its whole budget, waiting out every hand-back, stays under it.
      const wholeBudget = 5 * 45 + 4 * 330;
      expect(alarm.Threshold as number).toBeGreaterThan(wholeBudget);
    });

    it('fire on any executor error in 5 minutes', () => {
      expect(alarmNamed('executor-errors')).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(built, 'Executor') } }],
        Statistic: 'Sum',
        Period: 300,
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
    });
  });

  describe('the alarm topic', () => {
    it('lets CloudWatch publish for this stack\'s alarms only, which its own policy would otherwise refuse', () => {
      const policies = Object.values(built.template.findResources('AWS::SNS::TopicPolicy')) as Resource[];
      expect(policies).toHaveLength(1);
      // toMatchObject: the statement ids are CDK's own.
      expect(policies[0]!.Properties).toMatchObject({
        Topics: [topic],
        PolicyDocument: {
          Statement: [
            expect.objectContaining({ Effect: 'Deny' }),
            {
              Effect: 'Allow',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Action: 'sns:Publish',
              Resource: topic,
              Condition: {
                ArnLike: {
                  'aws:SourceArn': {
                    'Fn::Join': [
                      '',
                      ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':alarm:Retryproof-*'],
                    ],
                  },
                },
                StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              },
            },
          ],
          Version: '2012-10-17',
        },
      });
    });

    it('has no e-mail subscription when alarmEmail is unset', () => {
      expect(resolved.alarmEmail).toBeUndefined();
      built.template.resourceCountIs('AWS::SNS::Subscription', 0);
    });

    it('warns at synth that nobody hears the alarms, and how to set alarmEmail in retryproof.config.ts', () => {
      const warnings = Annotations.fromStack(built.stack).findWarning(
        `/Retryproof/Default/Alarms`,
        Match.stringLikeRegexp("no alarmEmail is set.*set alarmEmail: 'you@example.com' \\(in retryproof.config.ts, or in the WebhookReceiver's props\\)"),
      );
      expect(warnings).toHaveLength(1);
    });

    it('names its ARN in an output, for subscribing another way', () => {
      built.template.hasOutput('AlarmTopicArn', { Value: topic });
    });
  });
});
