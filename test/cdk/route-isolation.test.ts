/**
 * Routes with queues of their own (issue 23): a route that sets `rateLimit`, `concurrency` or
 * `ownQueue` gets its own SQS queue and event source, dead-lettering to the one DLQ, and the
 * functions make the queues' URLs from the shared queue's and the names their bundle carries. A configuration without
 * such routes deploys what it deployed before: no resource, variable or alarm more.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AccountRootPrincipal, Role } from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { deploymentFromEnv } from '../../lambdas/config/deployment.ts';
import { parseReceiverDescriptor } from '../../lambdas/config/receiver-descriptor.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig, RouteConfig } from '../../lambdas/config/route-config.ts';
import { routeQueueName } from '../../lib/stateful/work-queue.ts';
import { WebhookReceiver } from '../../lib/webhook-receiver.ts';
import { demoConfig } from './fixtures/demo-config.ts';
import { isolationConfig } from './fixtures/isolation-config.ts';
import { dashboardWidgets, grantsOf, logicalIdOf, NO_BUNDLING, synthesize, thrownBy } from './stack-fixture.ts';
import type { DashboardWidget, SynthesizedApp } from './stack-fixture.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };

/** A CloudFormation value as text: literal strings kept, each reference written `<Ref Id>`. */
function rendered(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (Array.isArray(v['Fn::Join'])) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(rendered).join(separator);
  }
  if (typeof v.Ref === 'string') return `<Ref ${v.Ref}>`;
  if (Array.isArray(v['Fn::GetAtt'])) return `<GetAtt ${(v['Fn::GetAtt'] as string[]).join('.')}>`;
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}

/** The ARN a work queue's name makes, as the DLQ's redrive-allow policy writes it. */
const arnByName = (name: string) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sqs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:${name}`]],
});

/** `[namespace, name, dim, value, ..., options]` of a dashboard line, as name, queue and label. */
function queueLines(widget: DashboardWidget): { name: string; queue: string; label: string; axis: string }[] {
  return (widget.properties.metrics ?? []).map((entry) => {
    const options = entry[entry.length - 1] as { label: string; yAxis?: string };
    return { name: entry[1] as string, queue: entry[3] as string, label: options.label, axis: options.yAxis ?? 'left' };
  });
}

describe('a receiver with a rate-limited route and a route of concurrency 3 beside ordinary ones', () => {
  const resolved = resolveConfig(isolationConfig);
  let built: SynthesizedApp;
  const id = (path: string) => logicalIdOf(built, path);
  const queues = () => built.template.findResources('AWS::SQS::Queue') as Record<string, Resource>;
  const fn = (path: string) => built.template.findResources('AWS::Lambda::Function')[id(path)] as Resource;
  const variables = (path: string) => (fn(path).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  const alarmNamed = (name: string): Record<string, unknown> => {
    const found = (Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[]).filter((a) => a.Properties.AlarmName === `Retryproof-${name}`);
    expect(found, `alarm Retryproof-${name}`).toHaveLength(1);
    return found[0]!.Properties;
  };
  const ROUTE_QUEUES = { orders: 'Work/RouteQueue-orders', shipments: 'Work/RouteQueue-shipments' } as const;

  beforeAll(() => {
    // Prepare: one synth for the whole block; cdk-nag runs in it, so every finding is acknowledged.
    built = synthesize(isolationConfig);
  });

  it('resolves the two routes onto queues of their own, and leaves demo and stripe on the shared one', () => {
    expect(resolved.routes.map((r) => [r.name, r.ownQueue, r.concurrency, r.rateLimit?.text])).toEqual([
      ['demo', false, undefined, undefined],
      ['stripe', false, undefined, undefined],
      ['orders', true, 25, '1 per second'],
      ['shipments', true, 3, undefined],
    ]);
  });

  it('has four queues: the shared one, the DLQ and one per isolated route, named after the route', () => {
    expect(Object.keys(queues()).sort()).toEqual([id('Work/Queue'), id('Work/DeadLetterQueue'), id(ROUTE_QUEUES.orders), id(ROUTE_QUEUES.shipments)].sort());
    expect(queues()[id(ROUTE_QUEUES.orders)]!.Properties.QueueName).toBe('Retryproof-work-orders');
    expect(queues()[id(ROUTE_QUEUES.shipments)]!.Properties.QueueName).toBe('Retryproof-work-shipments');
    expect(built.stack.receiver.routeQueues.size).toBe(2);
  });

  it('gives each route queue the shared queue\'s settings, its redrive policy to the one DLQ with maxReceiveCount 21 included', () => {
    const { QueueName: _shared, ...settings } = queues()[id('Work/Queue')]!.Properties;
    expect(settings).toEqual({
      MessageRetentionPeriod: 1_209_600,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [id('Work/DeadLetterQueue'), 'Arn'] }, maxReceiveCount: 21 },
      SqsManagedSseEnabled: true,
      VisibilityTimeout: resolved.queue.visibilityTimeoutSeconds,
    });
    for (const path of Object.values(ROUTE_QUEUES)) {
      const { QueueName: _name, ...own } = queues()[id(path)]!.Properties;
      expect(own, path).toEqual(settings);
      built.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id(path) }],
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
      });
    }
  });

  it('lets the DLQ take dead letters from the three work queues and no other: byQueue, each named', () => {
    expect(queues()[id('Work/DeadLetterQueue')]!.Properties.RedriveAllowPolicy).toEqual({
      redrivePermission: 'byQueue',
      sourceQueueArns: ['Retryproof-work', 'Retryproof-work-orders', 'Retryproof-work-shipments'].map(arnByName),
    });
  });

  it('feeds the executor from each work queue with the shared settings, at maximum concurrency 5 (the default), 25 and 3', () => {
    const mappings = Object.values(built.template.findResources('AWS::Lambda::EventSourceMapping')) as Resource[];
    const byQueue = Object.fromEntries(mappings.map((m) => [(m.Properties.EventSourceArn as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0], m.Properties]));
    const expected = (concurrency: number) => ({
      FunctionName: { Ref: id('Executor') },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: resolved.queue.batchSize,
      MaximumBatchingWindowInSeconds: resolved.queue.maxBatchingWindowSeconds,
      ScalingConfig: { MaximumConcurrency: concurrency },
    });
    expect(resolved.queue.maxConcurrency).toBe(5);
    expect(Object.keys(byQueue).sort()).toEqual([id('Work/Queue'), id(ROUTE_QUEUES.orders), id(ROUTE_QUEUES.shipments)].sort());
    expect(byQueue[id('Work/Queue')]).toMatchObject(expected(5));
    expect(byQueue[id(ROUTE_QUEUES.orders)]).toMatchObject(expected(25));
    expect(byQueue[id(ROUTE_QUEUES.shipments)]).toMatchObject(expected(3));
  });

  it('reserves the executor the sum of its event sources\' maximum concurrency, 5 + 25 + 3, so none of them is throttled', () => {
    expect(fn('Executor').Properties.ReservedConcurrentExecutions).toBe(33);
  });

  it('hands the three functions the shared queue\'s URL and, in their bundle, each route queue\'s name, from which their deploymentFromEnv makes each route queue\'s URL', () => {
    const head = 'https://sqs.eu-west-1.amazonaws.com/123456789012/';
    const names = { orders: queues()[id(ROUTE_QUEUES.orders)]!.Properties.QueueName, shipments: queues()[id(ROUTE_QUEUES.shipments)]!.Properties.QueueName };
    expect(names).toEqual({ orders: 'Retryproof-work-orders', shipments: 'Retryproof-work-shipments' });
    const { ingestFunction, executorFunction, reconcilerFunction } = built.stack.receiver;
    for (const [path, fn] of [['Ingest', ingestFunction], ['Executor', executorFunction], ['Reconciler', reconcilerFunction]] as const) {
      const env = variables(path);
      expect(env.RETRYPROOF_ROUTE_QUEUE_URLS, path).toBeUndefined();
      expect(env.RETRYPROOF_QUEUE_URL, path).toEqual({ Ref: id('Work/Queue') });
      // Prepare the variables as Lambda would see them once deployed; Act: the functions' own reading.
      const shipped = fn.shippedConfig;
      const deployment = deploymentFromEnv({ RETRYPROOF_EVENTS_TABLE: 'events', RETRYPROOF_QUEUE_URL: `${head}${queues()[id('Work/Queue')]!.Properties.QueueName as string}` }, shipped);
      // Assess: every route with ownQueue in the shipped configuration has its queue's URL.
      expect(deployment.config.routes.filter((r) => r.ownQueue).map((r) => r.name)).toEqual(['orders', 'shipments']);
      expect(deployment.routeQueueUrls).toEqual({ orders: `${head}${names.orders as string}`, shipments: `${head}${names.shipments as string}` });
    }
  });

  it('fails a cold start whose bundle names no queue for a route with a queue of its own, naming the route', () => {
    const shipped = JSON.parse(built.stack.receiver.ingestFunction.shippedConfig ?? '') as { routeQueueNames: Record<string, string> };
    const { shipments: _, ...fewer } = shipped.routeQueueNames;
    const err = thrownBy(() => deploymentFromEnv({ RETRYPROOF_EVENTS_TABLE: 'events', RETRYPROOF_QUEUE_URL: 'https://q/1/x' }, JSON.stringify({ ...shipped, routeQueueNames: fewer })));
    expect(err.message).toBe('the configuration bundled with this function names no queue for route "shipments", which has a queue of its own');
  });

  it('lets the ingest and the reconciler send to every work queue, the executor send to and consume each, and no function touch the DLQ', () => {
    const sqs = (role: string) =>
      grantsOf(built, role)
        .filter((g) => g.action.startsWith('sqs:'))
        .map((g) => `${g.action} on ${g.resource}`)
        .sort();
    const work = [id('Work/Queue'), id(ROUTE_QUEUES.orders), id(ROUTE_QUEUES.shipments)];
    const on = (actions: readonly string[]) => work.flatMap((q) => actions.map((a) => `sqs:${a} on ${q}`)).sort();
    expect(sqs('IngestRole')).toEqual(on(['SendMessage']));
    expect(sqs('ReconcilerRole')).toEqual(on(['SendMessage']));
    expect(sqs('ExecutorRole')).toEqual(on(['SendMessage', 'ReceiveMessage', 'DeleteMessage', 'ChangeMessageVisibility', 'GetQueueAttributes', 'GetQueueUrl']));
  });

  it('alarms on each route queue\'s oldest message at its route\'s budget, a deferral of 900 s more for the rate-limited one', () => {
    // 5 attempts x (45 s lease + 330 s visibility) = 1875 s; orders may also wait out one 900 s deferral.
    expect(resolved.routes.map((r) => [r.name, r.maxAttempts, r.leaseSeconds])).toContainEqual(['orders', 5, 45]);
    for (const [route, threshold] of [['orders', 2775], ['shipments', 1875]] as const) {
      const alarm = alarmNamed(`queue-oldest-over-retries-${route}`);
      expect(alarm).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id(ROUTE_QUEUES[route]), 'QueueName'] } }],
        Statistic: 'Maximum',
        Period: 60,
        Threshold: threshold,
        EvaluationPeriods: 3,
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: id('Alarms/Topic') }],
        OKActions: [{ Ref: id('Alarms/Topic') }],
      });
      expect((alarm.AlarmDescription as string).split(/(?<=\.)\s+(?=[A-Z])/)).toHaveLength(2);
    }
    expect(alarmNamed('queue-oldest-over-retries-orders').AlarmDescription).toContain('one 900 s wait for its rate limit of 1 per second');
    // The shared queue's alarm is over the routes it carries, demo and stripe, as before.
    expect(alarmNamed('queue-oldest-over-retries')).toMatchObject({ Threshold: 1875, Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id('Work/Queue'), 'QueueName'] } }] });
  });

  it('alarms on the rate-limited route\'s backlog (visible + in flight + delayed) over an hour of its limit for 15 minutes, and on no other route\'s', () => {
    const names = (Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[]).map((a) => a.Properties.AlarmName as string);
    expect(names.filter((n) => n.includes('backlog'))).toEqual(['Retryproof-route-backlog-orders']);
    const alarm = alarmNamed('route-backlog-orders');
    expect(alarm).toMatchObject({ Threshold: 3600, EvaluationPeriods: 15, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
    const metrics = alarm.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string; Dimensions: unknown[] }; Stat: string; Period: number } }[];
    expect(metrics.find((m) => m.Expression !== undefined)?.Expression).toBe('FILL(visible0, 0) + FILL(inFlight0, 0) + FILL(delayed0, 0)');
    const read = metrics.flatMap((m) => (m.MetricStat === undefined ? [] : [[m.MetricStat.Metric.MetricName, m.MetricStat.Stat, m.MetricStat.Period, m.MetricStat.Metric.Dimensions]]));
    const queue = [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id(ROUTE_QUEUES.orders), 'QueueName'] } }];
    expect(read).toEqual(
      ['ApproximateNumberOfMessagesVisible', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'].map((name) => [name, 'Maximum', 60, queue]),
    );
    expect((alarm.AlarmDescription as string).split(/(?<=\.)\s+(?=[A-Z])/)).toHaveLength(2);
  });

  it('graphs each work queue\'s backlog (visible, in flight, delayed) and oldest message against its alarm, labelled by route, the shared queue naming its routes', () => {
    const widgets = dashboardWidgets(built, 'Observability/Dashboard');
    const titled = (title: string) => {
      const found = widgets.filter((w) => w.properties.title === title);
      expect(found, title).toHaveLength(1);
      return found[0]!;
    };
    const name = (path: string) => `<GetAtt ${id(path)}.QueueName>`;
    for (const [title, path, delayed, limit] of [
      ['Backlog: shared queue (demo, stripe)', 'Work/Queue', 'delayed', 1875],
      ['Backlog: route orders (own queue, concurrency 25, 1 per second)', ROUTE_QUEUES.orders, 'delayed (waiting for the rate limit)', 2775],
      ['Backlog: route shipments (own queue, concurrency 3)', ROUTE_QUEUES.shipments, 'delayed', 1875],
    ] as const) {
      const widget = titled(title);
      expect(queueLines(widget)).toEqual([
        { name: 'ApproximateNumberOfMessagesVisible', queue: name(path), label: 'visible', axis: 'left' },
        { name: 'ApproximateNumberOfMessagesNotVisible', queue: name(path), label: 'in flight', axis: 'left' },
        { name: 'ApproximateNumberOfMessagesDelayed', queue: name(path), label: delayed, axis: 'left' },
        { name: 'ApproximateAgeOfOldestMessage', queue: name(path), label: 'oldest message age (s)', axis: 'right' },
      ]);
      expect((widget.properties as { annotations?: { horizontal?: { value: number; yAxis?: string }[] } }).annotations?.horizontal).toEqual([
        expect.objectContaining({ value: limit, yAxis: 'right' }),
      ]);
    }
    expect(queueLines(titled('Queue depth (visible messages)')).map((l) => l.label)).toEqual(['shared queue (demo, stripe)', 'route orders', 'route shipments', 'DLQ']);
    expect(widgets.find((w) => w.type === 'text' && (w.properties.markdown ?? '').includes('## Work queues'))?.properties.markdown).toContain(
      'Routes sharing the shared queue: demo, stripe.',
    );
    for (const w of widgets) expect(w.width).toBeLessThanOrEqual(24);
  });

  it('names the route queues in the receiver descriptor, which the CLI parses, and adds no output', () => {
    const outputs = built.template.findOutputs('*');
    expect(Object.keys(outputs).sort()).toEqual(['AlarmTopicArn', 'ApiUrl', 'DlqConsoleUrl', 'DlqUrl', 'QueueUrl', 'Receiver']);
    const descriptor = parseReceiverDescriptor(rendered(outputs.Receiver!.Value));
    expect(descriptor?.routeQueueUrls).toEqual({ orders: `<Ref ${id(ROUTE_QUEUES.orders)}>`, shipments: `<Ref ${id(ROUTE_QUEUES.shipments)}>` });
    expect(descriptor?.queueUrl).toBe(`<Ref ${id('Work/Queue')}>`);
  });
});

describe('a receiver whose routes all share the work queue', () => {
  let built: SynthesizedApp;

  beforeAll(() => {
    built = synthesize(demoConfig);
  });

  it('deploys what it deployed before routes could have queues: two queues, one event source, no route queue alarm or widget, no new variable or descriptor field', () => {
    const template = built.template;
    expect(Object.keys(template.findResources('AWS::SQS::Queue')).sort()).toEqual([logicalIdOf(built, 'Work/Queue'), logicalIdOf(built, 'Work/DeadLetterQueue')].sort());
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    const resources = Object.values(template.toJSON().Resources as Record<string, Resource>);
    expect(resources.filter((r) => r.Type === 'AWS::Lambda::Function').some((f) => JSON.stringify(f.Properties).includes('RETRYPROOF_ROUTE_QUEUE_URLS'))).toBe(false);
    const names = resources.filter((r) => r.Type === 'AWS::CloudWatch::Alarm').map((a) => a.Properties.AlarmName as string);
    expect(names.filter((n) => n.startsWith('Retryproof-queue-oldest') || n.includes('backlog'))).toEqual(['Retryproof-queue-oldest-over-retries']);
    expect(dashboardWidgets(built, 'Observability/Dashboard').filter((w) => (w.properties.title ?? '').startsWith('Backlog') || (w.properties.markdown ?? '').includes('Work queues'))).toEqual([]);
    expect(JSON.stringify(template.findOutputs('Receiver'))).not.toContain('routeQueueUrls');
    expect(built.stack.receiver.routeQueues.size).toBe(0);
    const dlq = template.findResources('AWS::SQS::Queue')[logicalIdOf(built, 'Work/DeadLetterQueue')] as Resource;
    expect(dlq.Properties.RedriveAllowPolicy).toEqual({ redrivePermission: 'byQueue', sourceQueueArns: [arnByName('Retryproof-work')] });
  });

  it('keeps a rate-limited route with ownQueue: false on the shared queue: the same resources, the shared alarm leaving room for one deferral', () => {
    // Prepare: stripe limited to 10 a minute, but on the shared queue.
    const limited: RetryproofConfig = { ...demoConfig, routes: demoConfig.routes.map((r) => (r.name === 'stripe' ? { ...r, rateLimit: { perMinute: 10 }, ownQueue: false } : r)) };
    // Act
    const other = synthesize(limited);
    // Assess
    const ids = (b: SynthesizedApp) => Object.keys(b.template.toJSON().Resources as object).sort();
    expect(ids(other)).toEqual(ids(built));
    const oldest = Object.values(other.template.findResources('AWS::CloudWatch::Alarm')).find(
      (a) => (a as Resource).Properties.AlarmName === 'Retryproof-queue-oldest-over-retries',
    ) as Resource;
    expect(oldest.Properties.Threshold).toBe(1875 + 900);
  });
});

describe('route queue names', () => {
  it('names a route queue <prefix>-work-<route>, and one that would pass 80 characters by the route\'s start and a digest, stable and distinct', () => {
    expect(routeQueueName('Retryproof', 'orders')).toBe('Retryproof-work-orders');
    const prefix = `P${'x'.repeat(39)}`;
    const [a, b] = [`${'r'.repeat(40)}-a`, `${'r'.repeat(40)}-b`].map((route) => routeQueueName(prefix, route));
    expect(a).toHaveLength(80);
    expect(b).toHaveLength(80);
    expect(a).not.toBe(b);
    expect(a).toMatch(new RegExp(`^${prefix}-work-r{25}-[0-9a-f]{8}$`));
    expect(routeQueueName(prefix, `${'r'.repeat(40)}-a`)).toBe(a);
    expect(`${prefix}-work-${'r'.repeat(34)}`).toHaveLength(80);
    expect(routeQueueName(prefix, 'r'.repeat(34))).toBe(`${prefix}-work-${'r'.repeat(34)}`);
  });
});

describe('a receiver with more isolated routes than a byQueue redrive-allow policy can name', () => {
  it('lets every queue of the account and Region use the DLQ (allowAll) and says so, warns when the executor reserves over 900, and lets a redriver send to every work queue', () => {
    // Prepare: ten routes with their own queues, 90 each: 11 source queues, 5 + 900 reserved.
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Many', { env: { account: '111111111111', region: 'eu-west-1' } });
    const route = (i: number): RouteConfig => ({ name: `r${i}`, signature: { scheme: 'stripe' }, secretName: `many/r${i}`, action: 'act', actionTimeSeconds: 10, concurrency: 90 });
    const entry = new URL('../../lambdas/actions/index.ts', import.meta.url).pathname;
    // Act
    const receiver = new WebhookReceiver(stack, 'Orders', { routes: Array.from({ length: 10 }, (_, i) => route(i)), actions: { act: { entry } } });
    const operator = new Role(stack, 'Operator', { assumedBy: new AccountRootPrincipal() });
    receiver.grantRedrive(operator);
    const template = Template.fromStack(stack);
    // Assess
    const dlq = template.findResources('AWS::SQS::Queue')[stack.getLogicalId(receiver.deadLetterQueue.node.defaultChild as never)] as Resource;
    expect(dlq.Properties.RedriveAllowPolicy).toEqual({ redrivePermission: 'allowAll' });
    template.resourceCountIs('AWS::SQS::Queue', 12);
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 11);
    const annotations = Annotations.fromStack(stack);
    annotations.hasInfo('*', Match.stringLikeRegexp('11 source queues, more than the 10 a byQueue redrive-allow policy can name'));
    annotations.hasWarning('*', Match.stringLikeRegexp('the executor reserves 905 concurrent executions'));
    const executor = template.findResources('AWS::Lambda::Function')[stack.getLogicalId(receiver.executorFunction.node.defaultChild as never)] as Resource;
    expect(executor.Properties.ReservedConcurrentExecutions).toBe(905);
    // A redriver may send to every work queue: the console's redrive returns a message to its own source queue.
    const operatorRole = stack.getLogicalId(operator.node.defaultChild as never);
    const sent = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify((p as Resource).Properties.Roles).includes(operatorRole))
      .flatMap((p) => ((p as Resource).Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement)
      .filter((st) => [st.Action].flat().includes('sqs:SendMessage'))
      .flatMap((st) => [st.Resource].flat().map((r) => (r as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0]));
    const workQueues = [receiver.queue, ...receiver.routeQueues.values()].map((q) => stack.getLogicalId(q.node.defaultChild as never));
    expect(sent.sort()).toEqual(workQueues.sort());
  });
});
