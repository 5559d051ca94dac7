import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { parseShippedConfig } from '../../lambdas/config/shipped-config.ts';
import { DLQ_RETENTION_SECONDS, INGEST_TIMEOUT_SECONDS, OUTAGE_HORIZON_SECONDS, outageReceiveCount } from '../../lambdas/config/route-config.ts';
import { SERVICE } from '../../lambdas/observability/metric-catalogue.ts';
import { RECONCILER_NODE_OPTIONS } from '../../lambdas/reconciler/reconciler-budget.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { EVENTS_TABLE, LEDGER_TABLE } from '../../lambdas/store/table-schema.ts';
import { demoConfig as config } from './fixtures/demo-config.ts';
import { SECRET_HANDLER_ID, ensuredSecretsOf, grantsOf, logicalIdOf, synthesize, withOwnAction } from './stack-fixture.ts';
import type { SynthesizedApp } from './stack-fixture.ts';

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string; UpdateReplacePolicy?: string };

describe('RetryproofStack, built from retryproof.config.ts', () => {
  let built: SynthesizedApp;
  const resolved = resolveConfig(config);
  const ref = (path: string) => ({ Ref: logicalIdOf(built, path) });
  const arnOf = (path: string) => ({ 'Fn::GetAtt': [logicalIdOf(built, path), 'Arn'] });
  const functionNamed = (id: string) =>
    built.template.findResources('AWS::Lambda::Function')[logicalIdOf(built, id)] as Resource;

  beforeAll(() => {
    // Prepare: one synth for the whole file; cdk-nag runs in it.
    built = synthesize(config);
  });

  it('routes POST /webhooks/{route} to the ingest function with payload format 2.0', () => {
    built.template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    built.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    built.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /webhooks/{route}' });
    built.template.resourceCountIs('AWS::ApiGatewayV2::Route', 1);
    built.template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: arnOf('Ingest'),
    });
  });

  it('throttles the default stage at the configured rate and burst, and writes JSON access logs without bodies', () => {
    const stages = built.template.findResources('AWS::ApiGatewayV2::Stage');
    const [stage] = Object.values(stages) as Resource[];
    expect(Object.keys(stages)).toHaveLength(1);
    expect(stage!.Properties).toMatchObject({
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: {
        ThrottlingRateLimit: resolved.api.throttlingRateLimit,
        ThrottlingBurstLimit: resolved.api.throttlingBurstLimit,
      },
      AccessLogSettings: { DestinationArn: arnOf('Webhooks/AccessLogs') },
    });
    const format = JSON.parse((stage!.Properties.AccessLogSettings as { Format: string }).Format) as Record<string, string>;
    expect(format.requestId).toBe('$context.requestId');
    expect(Object.values(format).filter((v) => /body|header|authorizer/i.test(v))).toEqual([]);
  });

  it('keeps events in one on-demand, PITR, TTL-on-expiresAt, KMS-encrypted table with its three GSIs, retained on delete', () => {
    const tables = built.template.findResources('AWS::DynamoDB::GlobalTable');
    const events = tables[logicalIdOf(built, 'Events/Table')] as Resource;
    expect(events.DeletionPolicy).toBe('Retain');
    expect(events.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: EVENTS_TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: EVENTS_TABLE.sortKey, KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      SSESpecification: { SSEEnabled: true },
      Replicas: [{ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }],
    });
    const indexes = (events.Properties.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown }[]).map((i) => [
      i.IndexName,
      i.KeySchema,
    ]);
    expect(indexes).toEqual(
      [EVENTS_TABLE.byTimeIndex, EVENTS_TABLE.parkedIndex, EVENTS_TABLE.failedIndex].map((i) => [
        i.name,
        [
          { AttributeName: i.partitionKey, KeyType: 'HASH' },
          { AttributeName: i.sortKey, KeyType: 'RANGE' },
        ],
      ]),
    );
    // The window index carries no payload: an ALL projection would pay every record write twice.
    const projections = (events.Properties.GlobalSecondaryIndexes as { IndexName: string; Projection: { ProjectionType: string; NonKeyAttributes?: string[] } }[]).map(
      (i) => [i.IndexName, i.Projection],
    );
    expect(Object.fromEntries(projections)).toEqual({
      [EVENTS_TABLE.byTimeIndex.name]: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...EVENTS_TABLE.byTimeIndex.projection] },
      [EVENTS_TABLE.parkedIndex.name]: { ProjectionType: 'ALL' },
      // Sparse: only FAILED records carry its keys, so its copies are of failures alone.
      [EVENTS_TABLE.failedIndex.name]: { ProjectionType: 'ALL' },
    });
    expect(EVENTS_TABLE.byTimeIndex.projection).not.toContain('body');
  });

  it('keeps the demo ledger in its own retained table with the byHour GSI while the demo is on', () => {
    const ledger = built.template.findResources('AWS::DynamoDB::GlobalTable')[logicalIdOf(built, 'Ledger/Table')] as Resource;
    expect(ledger.DeletionPolicy).toBe('Retain');
    expect(ledger.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: LEDGER_TABLE.partitionKey, KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [{ IndexName: LEDGER_TABLE.byHourIndex.name }],
      Replicas: [{ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }],
    });
  });

  it('moves a message to the DLQ after maxReceiveCount 21 receives: the backstop of maxAttempts 5 (2 x 5 + 2) and a day-long outage (9)', () => {
    expect(resolved.routes.map((r) => r.maxAttempts)).toEqual([5, 5]);
    expect(resolved.queue.visibilityTimeoutSeconds).toBe(330);
    expect(outageReceiveCount(OUTAGE_HORIZON_SECONDS, 330, resolved.executorTimeoutSeconds)).toBe(9);
    expect(resolved.queue.maxReceiveCount).toBe(21);
    built.template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: arnOf('Work/DeadLetterQueue'), maxReceiveCount: 21 },
    });
  });

  it('keeps DLQ messages 14 days and allows redrive to the work queue only', () => {
    const dlq = built.template.findResources('AWS::SQS::Queue')[logicalIdOf(built, 'Work/DeadLetterQueue')] as Resource;
    expect(dlq.Properties.MessageRetentionPeriod).toBe(1_209_600);
    expect(DLQ_RETENTION_SECONDS).toBe(1_209_600);
    const queueName = (built.template.findResources('AWS::SQS::Queue')[logicalIdOf(built, 'Work/Queue')] as Resource)
      .Properties.QueueName as string;
    expect(dlq.Properties.RedriveAllowPolicy).toEqual({
      redrivePermission: 'byQueue',
      sourceQueueArns: [
        {
          'Fn::Join': [
            '',
            ['arn:', { Ref: 'AWS::Partition' }, ':sqs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:${queueName}`],
          ],
        },
      ],
    });
  });

  it('encrypts both queues and refuses requests without TLS', () => {
    const queues = built.template.findResources('AWS::SQS::Queue');
    expect(Object.keys(queues)).toHaveLength(2);
    for (const queue of Object.values(queues) as Resource[]) {
      expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    }
    for (const path of ['Work/Queue', 'Work/DeadLetterQueue']) {
      built.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [ref(path)],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });

  it('hides a received message for at least 6x the executor timeout', () => {
    const queue = built.template.findResources('AWS::SQS::Queue')[logicalIdOf(built, 'Work/Queue')] as Resource;
    const executorTimeout = functionNamed('Executor').Properties.Timeout as number;
    expect(executorTimeout).toBe(resolved.executorTimeoutSeconds);
    expect(queue.Properties.VisibilityTimeout).toBe(resolved.queue.visibilityTimeoutSeconds);
    expect(queue.Properties.VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * executorTimeout);
  });

  it('runs three functions on nodejs24.x and arm64 with source maps and their own log groups, untraced by default', () => {
    const functions = built.template.findResources('AWS::Lambda::Function');
    // Retryproof's three, and the deploy-time function behind the route secrets (lib/stateful/route-secrets.ts).
    expect(Object.keys(functions).filter((id) => !id.startsWith(SECRET_HANDLER_ID))).toHaveLength(3);
    for (const [id, service, nodeOptions] of [
      ['Ingest', SERVICE.ingest, '--enable-source-maps'],
      ['Executor', SERVICE.executor, '--enable-source-maps'],
      ['Reconciler', SERVICE.reconciler, RECONCILER_NODE_OPTIONS],
    ]) {
      expect(functionNamed(id!).Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        LoggingConfig: { LogGroup: ref(`${id}Logs`) },
        Environment: {
          Variables: {
            NODE_OPTIONS: nodeOptions,
            POWERTOOLS_SERVICE_NAME: service,
            POWERTOOLS_METRICS_NAMESPACE: 'Retryproof',
          },
        },
      });
      built.template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: resolved.logRetentionDays });
      // `tracing` is off by default: no tracing config (Lambda's PassThrough) and no X-Ray grant.
      expect(functionNamed(id!).Properties.TracingConfig).toBeUndefined();
      expect(grantsOf(built, `${id}Role`).filter((g) => g.action.startsWith('xray:'))).toEqual([]);
    }
    expect(functionNamed('Ingest').Properties.Timeout).toBe(INGEST_TIMEOUT_SECONDS);
    expect(functionNamed('Reconciler').Properties.Timeout).toBe(300);
  });

  it('bundles into each function the config resolved at synth (less the demo switch and the action paths, which are the build\'s), and hands it the names it needs, per the ENV contract', () => {
    const env = (id: string) => (functionNamed(id).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const { demo: _demo, actions: _actions, ...written } = config;
    // A secret the receiver creates is read under its prefixed name (lib/stateful/route-secrets.ts).
    const shipped = { ...written, routes: written.routes.map((r) => ({ ...r, secretName: `Retryproof/${r.secretName}` })) };
    const { receiver } = built.stack;
    for (const [id, fn] of [['Ingest', receiver.ingestFunction], ['Executor', receiver.executorFunction], ['Reconciler', receiver.reconcilerFunction]] as const) {
      expect(parseShippedConfig(fn.shippedConfig)).toEqual({ resolved: JSON.parse(JSON.stringify(resolveConfig(shipped))) as unknown, routeQueueNames: {} });
      expect(env(id).RETRYPROOF_CONFIG).toBeUndefined();
      expect(env(id)).toMatchObject({
        RETRYPROOF_EVENTS_TABLE: ref('Events/Table'),
        RETRYPROOF_QUEUE_URL: ref('Work/Queue'),
      });
      // No function reads the DLQ; dead-letter copies reach it through the work queue's redrive policy.
      expect(env(id).RETRYPROOF_DLQ_URL).toBeUndefined();
    }
    // No function publishes: the breaker's pause is announced by its alarm.
    for (const fn of ['Ingest', 'Executor', 'Reconciler']) expect(env(fn).RETRYPROOF_ALARM_TOPIC_ARN, fn).toBeUndefined();
    expect(env('Executor').RETRYPROOF_LEDGER_TABLE).toEqual(ref('Ledger/Table'));
    expect(env('Reconciler').RETRYPROOF_LEDGER_TABLE).toEqual(ref('Ledger/Table'));
    expect(env('Ingest').RETRYPROOF_LEDGER_TABLE).toBeUndefined();
  });

  it('feeds the executor from the queue with partial batch failures, batch size, batching window and max concurrency', () => {
    built.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    built.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf('Work/Queue'),
      FunctionName: ref('Executor'),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: resolved.queue.batchSize,
      MaximumBatchingWindowInSeconds: resolved.queue.maxBatchingWindowSeconds,
      ScalingConfig: { MaximumConcurrency: resolved.queue.maxConcurrency },
    });
  });

  it('reserves the executor as much concurrency as its event source may use, so the poller\'s invocations are never throttled', () => {
    expect(functionNamed('Executor').Properties.ReservedConcurrentExecutions).toBe(resolved.queue.maxConcurrency);
    // Only the executor: the ingest and the reconciler share the account's pool.
    expect(functionNamed('Ingest').Properties.ReservedConcurrentExecutions).toBeUndefined();
    expect(functionNamed('Reconciler').Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it('invokes the reconciler on an EventBridge Scheduler rate of every 60 minutes', () => {
    built.template.resourceCountIs('AWS::Scheduler::Schedule', 1);
    built.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      State: 'ENABLED',
      Target: { Arn: arnOf('Reconciler'), RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 } },
    });
  });

  it('puts the schedule in a group of its own, so the group\'s invocation metrics are the reconciler\'s alone', () => {
    const groups = Object.values(built.template.findResources('AWS::Scheduler::ScheduleGroup')) as Resource[];
    expect(groups).toHaveLength(1);
    built.template.hasResourceProperties('AWS::Scheduler::Schedule', { GroupName: groups[0]!.Properties.Name });
    expect(groups[0]!.DeletionPolicy).toBe('Delete');
  });

  it('ensures one signing secret per route at deploy, named with the prefix, created when missing and adopted when it exists, never deleted', () => {
    built.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const ensured = [...ensuredSecretsOf(built.template).values()];
    expect(ensured.map((e) => e.SecretName).sort()).toEqual(config.routes.map((r) => `Retryproof/${r.secretName}`).sort());
    for (const props of ensured) {
      // No value in the template: a placeholder anyone can read would sign deliveries.
      expect(Object.keys(props).sort()).toEqual(['Description', 'SecretName', 'ServiceToken']);
    }
    // The function calls CreateSecret and DescribeSecret (to adopt), never DeleteSecret or PutSecretValue.
    const calls = grantsOf(built, 'Secrets/EnsureHandlerRole').filter((g) => g.action.startsWith('secretsmanager:'));
    expect([...new Set(calls.map((g) => g.action))].sort()).toEqual(['secretsmanager:CreateSecret', 'secretsmanager:DescribeSecret']);
    for (const [, r] of Object.entries(built.template.findResources('Custom::RetryproofRouteSecret'))) expect((r as Resource).DeletionPolicy).toBe('Delete');
  });

  it('has a KMS-encrypted alarm topic that refuses requests without TLS', () => {
    built.template.resourceCountIs('AWS::SNS::Topic', 1);
    built.template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: arnOf('Alarms/Key') });
    built.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    built.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
    built.template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('outputs the webhook base URL, both queue URLs, the DLQ console link and the alarm topic', () => {
    const outputs = built.template.findOutputs('*');
    expect(Object.keys(outputs).sort()).toEqual(['AlarmTopicArn', 'ApiUrl', 'DlqConsoleUrl', 'DlqUrl', 'QueueUrl', 'Receiver']);
    expect(outputs.AlarmTopicArn!.Value).toEqual(ref('Alarms/Topic'));
    expect(outputs.ApiUrl!.Value).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf(built, 'Webhooks/Api'), 'ApiEndpoint'] }, '/webhooks/']] });
    expect(outputs.QueueUrl!.Value).toEqual(ref('Work/Queue'));
    expect(outputs.DlqUrl!.Value).toEqual(ref('Work/DeadLetterQueue'));
    const consoleUrl = JSON.stringify(outputs.DlqConsoleUrl!.Value);
    expect(consoleUrl).toContain('.console.aws.amazon.com/sqs/v3/home?region=');
    expect(consoleUrl).toContain('#/queues/');
    expect(consoleUrl).toContain(JSON.stringify(ref('Work/DeadLetterQueue')));
    expect(consoleUrl).toContain('%2F');
    expect(consoleUrl).toContain('%3A');
  });
});

describe('RetryproofStack, with an e-mail address, an imported secret, tracing on and demo off', () => {
  // Without the demo there is no payout action; the routes name one of their own.
  const own = withOwnAction(config);
  const variant: RetryproofConfig = {
    ...own,
    alarmEmail: 'ops@example.com',
    tracing: true,
    routes: own.routes.map((r) => (r.name === 'stripe' ? { ...r, importSecret: true, secretName: 'shared/stripe-signing' } : r)),
  };
  let built: SynthesizedApp;

  beforeAll(() => {
    built = synthesize(variant);
  });

  it('subscribes the e-mail address to the alarm topic', () => {
    built.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });

  it('traces the three functions actively with `tracing: true`, and lets each send its segments', () => {
    for (const id of ['Ingest', 'Executor', 'Reconciler']) {
      const fn = built.template.findResources('AWS::Lambda::Function')[logicalIdOf(built, id)] as Resource;
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      const xray = grantsOf(built, `${id}Role`).filter((g) => g.action.startsWith('xray:'));
      expect(xray.map((g) => `${g.action} on ${g.resource}`).sort()).toEqual(['xray:PutTelemetryRecords on *', 'xray:PutTraceSegments on *']);
    }
  });

  it('imports a secret by name instead of creating it, and lets the ingest read it', () => {
    const ensured = [...ensuredSecretsOf(built.template).values()].map((e) => e.SecretName);
    expect(ensured).toEqual(['Retryproof/retryproof/demo']);
    const secretReads = grantsOf(built, 'IngestRole')
      .filter((g) => g.action === 'secretsmanager:GetSecretValue')
      .map((g) => g.resource);
    expect(secretReads).toHaveLength(2);
    expect(secretReads.find((r) => r.includes(':secret:Retryproof/retryproof/demo-??????"'))).toBeDefined();
    expect(secretReads.find((r) => r.includes(':secret:shared/stripe-signing-??????"'))).toBeDefined();
  });

  it('has no ledger table when the demo is off', () => {
    const tables = Object.values(built.template.findResources('AWS::DynamoDB::GlobalTable')) as Resource[];
    expect(tables).toHaveLength(1);
    expect(tables[0]!.Properties.KeySchema).toEqual([
      { AttributeName: EVENTS_TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: EVENTS_TABLE.sortKey, KeyType: 'RANGE' },
    ]);
    expect(built.stack.node.tryFindChild('Ledger')).toBeUndefined();
  });
});
