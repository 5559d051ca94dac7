/**
 * The construct as a team embeds it in its own stack: its own actions, several receivers
 * side by side, and the mistakes a user makes refused at synth with what to do.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lambdas/config/resolve-config.ts';
import { WebhookReceiver, generatedEntriesOf } from '../../lib/webhook-receiver.ts';
import type { WebhookReceiverProps } from '../../lib/webhook-receiver.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, thrownBy } from './stack-fixture.ts';

const NOTIFY = fileURLToPath(new URL('../support/fixtures/notify-action.ts', import.meta.url));

function props(route: string, more: Partial<WebhookReceiverProps> = {}): WebhookReceiverProps {
  return {
    routes: [{ name: route, signature: { scheme: 'standard-webhooks' }, secretName: `${route}/signing`, action: 'notify', actionTimeSeconds: 10 }],
    actions: { notify: { entry: NOTIFY } },
    ...more,
  };
}


/** Every physical name a resource of `template` sets, as `Type.Property=value`. */
function physicalNames(template: Template): string[] {
  const names: string[] = [];
  const fields = ['QueueName', 'TableName', 'DashboardName', 'AlarmName', 'Name', 'TopicName', 'FunctionName', 'LogGroupName'];
  for (const [, resource] of Object.entries(template.toJSON().Resources as Record<string, { Type: string; Properties?: Record<string, unknown> }>)) {
    for (const field of fields) {
      const value = resource.Properties?.[field];
      if (value !== undefined) names.push(`${resource.Type}.${field}=${JSON.stringify(value)}`);
    }
  }
  return names;
}

describe('WebhookReceiver in a stack of its own', () => {
  it('lets two receivers live in one stack: no physical name is shared, and each exposes its parts', () => {
    const stack = new Stack(new App({ context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } }), 'Shop');
    const orders = new WebhookReceiver(stack, 'Orders', props('orders'));
    const refunds = new WebhookReceiver(stack, 'Refunds', props('refunds', { namePrefix: 'shop-refunds' }));
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 2);
    template.resourceCountIs('AWS::SQS::Queue', 4);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 2);
    const names = physicalNames(template);
    expect(names.length).toBeGreaterThan(20);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect(orders.namePrefix).toBe('Shop-Orders');
    expect(refunds.namePrefix).toBe('shop-refunds');
    template.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'Shop-Orders-work' });
    template.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'shop-refunds-work' });
    for (const receiver of [orders, refunds]) {
      expect([receiver.api, receiver.table, receiver.queue, receiver.deadLetterQueue, receiver.dashboard, receiver.alarmTopic]).not.toContain(undefined);
      expect(receiver.url).toContain('/webhooks/');
    }
  });

  it('writes an executor entry that imports the user\'s action module, and a reconciler entry with no ledger', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Entries');
    const receiver = new WebhookReceiver(stack, 'Orders', props('orders'));
    const dir = generatedEntriesOf(receiver);
    const executor = readFileSync(join(dir, 'executor.mjs'), 'utf8');
    expect(executor).toContain(`import * as m0 from ${JSON.stringify(NOTIFY)};`);
    expect(executor).toContain('export const handler = executorLambda({ "notify": m0 });');
    expect(readFileSync(join(dir, 'reconciler.mjs'), 'utf8')).toContain('export const handler = reconcilerLambda({  });');
  });

  it('keeps the metrics of two receivers apart, same route names or not: each alarm reads the namespace its own functions emit into', () => {
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Shop');
    const orders = new WebhookReceiver(stack, 'Orders', props('orders'));
    const again = new WebhookReceiver(stack, 'Again', { ...props('orders'), routes: [{ ...props('orders').routes[0]!, secretName: 'again/signing' }] });
    // Synth passes: a route name two receivers share mixes nothing.
    app.synth();
    const template = Template.fromStack(stack);
    const resources = Object.values(template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>);
    // Each receiver's functions emit into its namespace, its name prefix.
    const emitters = resources
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => (r.Properties.Environment as { Variables: Record<string, string> } | undefined)?.Variables.POWERTOOLS_METRICS_NAMESPACE)
      .filter((n) => n !== undefined);
    expect([...new Set(emitters)].sort()).toEqual(['Shop-Again', 'Shop-Orders']);
    // Ingest, executor, reconciler and the function that ensures the route secrets, per receiver.
    expect(emitters).toHaveLength(8);
    // Each alarm on a retryproof metric reads its own receiver's namespace only (AWS/* metrics are the services' own).
    const alarms = resources.filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
    let checked = 0;
    for (const alarm of alarms) {
      const name = alarm.Properties.AlarmName as string;
      const owner = [orders, again].find((r) => name.startsWith(`${r.namePrefix}-`));
      expect(owner, name).toBeDefined();
      const math = (alarm.Properties.Metrics as { MetricStat?: { Metric: { Namespace: string } } }[] | undefined) ?? [];
      const namespaces = [alarm.Properties.Namespace as string | undefined, ...math.map((m) => m.MetricStat?.Metric.Namespace)]
        .filter((n): n is string => n !== undefined && !n.startsWith('AWS/'));
      for (const namespace of namespaces) expect(namespace, name).toBe(owner?.namePrefix);
      checked += namespaces.length;
    }
    // The heartbeat, the findings, the breaker and the duplicate-storm alarms of both receivers at least.
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  it('refuses, at synth, two receivers of one stack with the same name prefix: their names and metrics would collide', () => {
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Twice');
    new WebhookReceiver(stack, 'A', props('orders', { namePrefix: 'twice' }));
    new WebhookReceiver(stack, 'B', props('refunds', { namePrefix: 'twice' }));
    const message = thrownBy(() => app.synth()).message;
    expect(message).toContain('the receivers Twice/A and Twice/B both have the name prefix "twice": their resources\' names and metrics would collide; set namePrefix on one');
  });

  it('refuses a route whose action nobody supplied, naming the route and the action', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Missing');
    const err = thrownBy(() => new WebhookReceiver(stack, 'Orders', { ...props('orders'), actions: {} }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/^route "orders": action "notify" is not supplied/);
  });

  it('refuses an action module that does not exist, naming the action and the path', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'NoFile');
    const err = thrownBy(() => new WebhookReceiver(stack, 'Orders', props('orders', { actions: { notify: { entry: 'src/actions/notfy.ts' } } })));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(`action "notify": its entry src/actions/notfy.ts does not exist (paths are relative to ${process.cwd()})`);
  });

  it('refuses a name prefix no resource would accept', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Prefix');
    const err = thrownBy(() => new WebhookReceiver(stack, 'Orders', props('orders', { namePrefix: '9 orders' })));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/namePrefix/);
  });

  it('grants a redriver what `dlq redrive` and `redrive` call: the move task on the DLQ, reading it, sending to the work queue, and the redrive writes', async () => {
    const { AccountRootPrincipal, Role } = await import('aws-cdk-lib/aws-iam');
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Redrive');
    const receiver = new WebhookReceiver(stack, 'Orders', props('orders'));
    const operator = new Role(stack, 'Operator', { assumedBy: new AccountRootPrincipal() });
    receiver.grantRedrive(operator);
    const policies = Template.fromStack(stack).findResources('AWS::IAM::Policy');
    const statements = Object.values(policies)
      .filter((p) => JSON.stringify((p as { Properties: { Roles: unknown } }).Properties.Roles).includes(stack.getLogicalId(operator.node.defaultChild as never)))
      .flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } } }).Properties.PolicyDocument.Statement);
    const dlq = { 'Fn::GetAtt': [stack.getLogicalId(receiver.deadLetterQueue.node.defaultChild as never), 'Arn'] };
    const queue = { 'Fn::GetAtt': [stack.getLogicalId(receiver.queue.node.defaultChild as never), 'Arn'] };
    const actionsOn = (resource: unknown): string[] =>
      statements.filter((st) => JSON.stringify(st.Resource) === JSON.stringify(resource)).flatMap((st) => [st.Action].flat()).sort();
    // cli/operations/dead-letters.ts: StartMessageMoveTask and ListMessageMoveTasks name the DLQ as the task's source.
    expect(actionsOn(dlq)).toEqual(expect.arrayContaining(['sqs:ListMessageMoveTasks', 'sqs:ReceiveMessage', 'sqs:StartMessageMoveTask']));
    expect(actionsOn(queue)).toEqual(expect.arrayContaining(['sqs:SendMessage']));
    // Nothing on the work queue beyond sending: a redriver never reads or moves live work.
    expect(actionsOn(queue)).not.toContain('sqs:StartMessageMoveTask');
    expect(actionsOn(queue)).not.toContain('sqs:ReceiveMessage');
    // `retryproof redrive` (lambdas/routes/bulk-redrive.ts): the sparse indexes, a route's state, the redrive and unpark writes.
    const tableArn = { 'Fn::GetAtt': [stack.getLogicalId(receiver.table.node.defaultChild as never), 'Arn'] };
    const onTable = statements.filter((st) => JSON.stringify(st.Resource).includes(JSON.stringify(tableArn))).flatMap((st) => [st.Action].flat());
    expect([...new Set(onTable)].sort()).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
  });

  it('grants the ingest DeleteItem only when a route remembers bodies (a scheme that signs no timestamp takes a replayed capture back)', () => {
    const ingestActions = (receiverProps: WebhookReceiverProps): string => {
      const stack = new Stack(new App({ context: NO_BUNDLING }), 'Grants');
      const receiver = new WebhookReceiver(stack, 'Orders', receiverProps);
      const role = stack.getLogicalId(receiver.ingestFunction.role?.node.defaultChild as never);
      const policies = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy')).filter((p) =>
        JSON.stringify((p as { Properties: { Roles: unknown } }).Properties.Roles).includes(role),
      );
      return JSON.stringify(policies);
    };
    const base = props('orders');
    const github = { ...base, routes: [{ ...base.routes[0]!, signature: { scheme: 'github' as const } }] };
    expect(ingestActions(base)).not.toContain('dynamodb:DeleteItem');
    expect(ingestActions(github)).toContain('dynamodb:DeleteItem');
  });

  it('grants Query on the table to the ingest, the executor and the reconciler only when a route is ordered per entity', () => {
    const queriesTable = (receiverProps: WebhookReceiverProps, fn: 'ingestFunction' | 'executorFunction' | 'reconcilerFunction'): boolean => {
      const stack = new Stack(new App({ context: NO_BUNDLING }), 'Lines');
      const receiver = new WebhookReceiver(stack, 'Orders', receiverProps);
      const role = stack.getLogicalId(receiver[fn].role?.node.defaultChild as never);
      const tableArn = JSON.stringify({ 'Fn::GetAtt': [stack.getLogicalId(receiver.table.node.defaultChild as never), 'Arn'] });
      const statements = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
        .filter((p) => JSON.stringify((p as { Properties: { Roles: unknown } }).Properties.Roles).includes(role))
        .flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } } }).Properties.PolicyDocument.Statement);
      // Query on the table itself, not on one of its indexes.
      return statements.some((st) => [st.Action].flat().includes('dynamodb:Query') && [st.Resource].flat().some((r) => JSON.stringify(r) === tableArn));
    };
    const base = props('orders');
    const ordered = { ...base, routes: [{ ...base.routes[0]!, orderBy: '{body:/customer}' }] };
    for (const fn of ['ingestFunction', 'executorFunction', 'reconcilerFunction'] as const) {
      expect(queriesTable(base, fn), fn).toBe(false);
      expect(queriesTable(ordered, fn), fn).toBe(true);
    }
  });

  it('reserves the executor the event source\'s maximum concurrency, whatever it is configured to', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Busy');
    const receiver = new WebhookReceiver(stack, 'Orders', props('orders', { queue: { maxConcurrency: 40 } }));
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 40 } });
    const executor = template.findResources('AWS::Lambda::Function')[stack.getLogicalId(receiver.executorFunction.node.defaultChild as never)] as {
      Properties: Record<string, unknown>;
    };
    expect(executor.Properties.ReservedConcurrentExecutions).toBe(40);
  });

  it('grants kms:Decrypt on the key of imported secrets when given one, so the ingest can read them', async () => {
    const { Key } = await import('aws-cdk-lib/aws-kms');
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Kms');
    const key = new Key(stack, 'SecretsKey');
    const base = props('orders');
    new WebhookReceiver(stack, 'Orders', { ...base, routes: base.routes.map((r) => ({ ...r, importSecret: true })), secretsKey: key });
    const policies = JSON.stringify(Template.fromStack(stack).findResources('AWS::IAM::Policy'));
    expect(policies).toMatch(/"kms:Decrypt"/);
    expect(policies).toContain(stack.getLogicalId(key.node.defaultChild as never));
  });
});
