/**
 * `--stack NAME [--receiver ID]` and `retryproof receivers`, on really synthesized templates:
 * a consumer's stack with two WebhookReceivers (ids Webhooks and Payments), a stack with one,
 * and the app's own stack (receiver Default). CloudFormation has no local emulator, so a
 * client stub answers DescribeStacks and GetTemplate from those templates
 * (cloudformation-stub.ts); nothing here calls AWS.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { S3Client } from '@aws-sdk/client-s3';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { App, CfnOutput, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import type { AwsClients } from '../../cli/aws-clients.ts';
import { EXIT, UsageError } from '../../cli/errors.ts';
import { runCli } from '../../cli/main.ts';
import type { CliIo } from '../../cli/main.ts';
import { resolveTarget } from '../../cli/target.ts';
import type { Target } from '../../cli/target.ts';
import { WebhookReceiver } from '../../lib/webhook-receiver.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, synthesize } from '../cdk/stack-fixture.ts';
import { cloudFormationStub, deployedStack, receiverIds, resolveValue } from './cloudformation-stub.ts';
import type { DeployedStack, StubCalls } from './cloudformation-stub.ts';

const ACTION = { entry: new URL('../../lambdas/actions/index.ts', import.meta.url).pathname };
const REGION = 'eu-west-1';

const route = (name: string) => ({
  name,
  signature: { scheme: 'hmac-sha256' as const, header: 'x-signature' },
  secretName: `consumer/${name}`,
  actionTimeSeconds: 10,
  action: 'act',
});

// A consumer's app: one stack, two receivers, each with its own routes and margins.
const app = new App({ context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } });
const consumer = new Stack(app, 'Consumer', { env: { account: '111111111111', region: REGION } });
const webhooks = new WebhookReceiver(consumer, 'Webhooks', {
  routes: [route('orders'), route('refunds')],
  actions: { act: ACTION },
  reconciliation: { windowHours: 6, settleSeconds: 120, stuckAfterSeconds: 600 },
});
const payments = new WebhookReceiver(consumer, 'Payments', { routes: [route('charges')], actions: { act: ACTION } });
const single = new Stack(app, 'Single', { env: { account: '111111111111', region: REGION } });
new WebhookReceiver(single, 'Orders', { routes: [route('orders')], actions: { act: ACTION } });
const unrelated = new Stack(app, 'Network', { env: { account: '111111111111', region: REGION } });
new CfnOutput(unrelated, 'VpcId', { value: 'vpc-123' });
// The app's own stack, as bin/app.ts builds it: receiver Default, with the demo's ledger.
const legacy = synthesize({
  demo: true,
  routes: [{ name: 'demo', signature: { scheme: 'hmac-sha256', header: 'x-signature' }, secretName: 'retryproof/demo', actionTimeSeconds: 10, action: 'payout' }],
  reconciliation: { windowHours: 24, everyMinutes: 60, settleSeconds: 300, stuckAfterSeconds: 900 },
});

const STACKS: DeployedStack[] = [deployedStack(consumer), deployedStack(single), deployedStack(unrelated), deployedStack(legacy.stack)];
const stackOf = (name: string): DeployedStack => STACKS.find((s) => s.name === name)!;

/** AWS clients whose CloudFormation is the stub; DynamoDB, SQS, S3 and Lambda are never called here. */
function stubAws(calls?: StubCalls): AwsClients {
  return {
    region: () => Promise.resolve(REGION),
    cloudFormation: () => cloudFormationStub(STACKS, calls === undefined ? {} : { calls }),
    dynamo: (region) => new DynamoDBClient({ region, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
    sqs: (region) => new SQSClient({ region, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
    s3: (region) => new S3Client({ region, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
    lambda: (region) => new LambdaClient({ region, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  };
}

async function target(flags: { stack: string; receiver?: string }): Promise<Target> {
  const t = await resolveTarget(flags, {}, stubAws());
  t.close();
  return t;
}

async function cli(argv: string[], aws: Partial<AwsClients> = stubAws()): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stderrIsTty: false, env: {}, aws };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

describe('--stack NAME --receiver ID on a stack of two receivers', () => {
  it('--receiver Webhooks resolves Webhooks\' queue, DLQ and table, and the configuration its reconciler runs', async () => {
    // Prepare: what CloudFormation would resolve Webhooks' own resources to.
    const ids = receiverIds(webhooks);
    const stack = stackOf('Consumer');
    // Act
    const t = await target({ stack: 'Consumer', receiver: 'Webhooks' });
    // Assess
    expect(t.kind).toBe('aws');
    expect(t.receiver?.receiver).toBe('Webhooks');
    expect(t.queueUrl).toBe(resolveValue(stack, { Ref: ids.queue }));
    expect(t.dlqUrl).toBe(resolveValue(stack, { Ref: ids.dlq }));
    expect(t.eventsTable).toBe(resolveValue(stack, { Ref: ids.table }));
    expect(t.ledgerTable).toBeUndefined();
    expect(t.routes).toEqual(['orders', 'refunds']);
    expect(t.config.reconciliation).toMatchObject({ windowHours: 6, settleSeconds: 120, stuckAfterSeconds: 600 });
    expect(t.description).toBe('receiver Webhooks of stack Consumer');
  });

  it('--receiver Payments resolves the other receiver\'s resources and routes', async () => {
    const ids = receiverIds(payments);
    const stack = stackOf('Consumer');
    const t = await target({ stack: 'Consumer', receiver: 'Payments' });
    expect(t.receiver?.receiver).toBe('Payments');
    expect([t.queueUrl, t.dlqUrl, t.eventsTable]).toEqual([ids.queue, ids.dlq, ids.table].map((id) => resolveValue(stack, { Ref: id })));
    expect(t.routes).toEqual(['charges']);
    // Its own margins: the defaults, not Webhooks'.
    expect(t.config.reconciliation.settleSeconds).not.toBe(120);
  });

  it('without --receiver is a usage error that lists both', async () => {
    await expect(target({ stack: 'Consumer' })).rejects.toThrow(UsageError);
    await expect(target({ stack: 'Consumer' })).rejects.toThrow('stack Consumer has 2 receivers: pick one with --receiver Payments or --receiver Webhooks');
    const out = await cli(['--stack', 'Consumer', 'routes', 'list']);
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe('retryproof routes list: stack Consumer has 2 receivers: pick one with --receiver Payments or --receiver Webhooks');
  });

  it('a --receiver the stack does not have is a usage error naming the near one and all', async () => {
    await expect(target({ stack: 'Consumer', receiver: 'Webhook' })).rejects.toThrow(
      '--receiver Webhook: stack Consumer has no such receiver (did you mean "Webhooks"?); its receivers: Payments, Webhooks',
    );
  });
});

describe('--stack NAME on a stack of one receiver, and on the app\'s own stack', () => {
  it('a stack with one receiver needs no --receiver', async () => {
    const t = await target({ stack: 'Single' });
    expect(t.receiver?.receiver).toBe('Orders');
    expect(t.routes).toEqual(['orders']);
    expect(t.description).toBe('stack Single');
  });

  it('the app stack (receiver Default) resolves its queues, table, demo ledger and configuration', async () => {
    const stack = stackOf('Retryproof');
    const ids = receiverIds(legacy.stack.receiver);
    const t = await target({ stack: 'Retryproof' });
    expect(t.receiver?.receiver).toBe('Default');
    expect(t.queueUrl).toBe(resolveValue(stack, { Ref: ids.queue }));
    expect(t.eventsTable).toBe(resolveValue(stack, { Ref: ids.table }));
    expect(t.ledgerTable).toMatch(/^Retryproof-LedgerTable[0-9A-F]{8}-/);
    expect(t.routes).toEqual(['demo']);
    expect(t.config.reconciliation.settleSeconds).toBe(300);
  });

  it('a stack without a receiver says so, and how to list them', async () => {
    await expect(target({ stack: 'Network' })).rejects.toThrow(
      'stack Network in region eu-west-1 has no retryproof receiver (no output holds a receiver descriptor): deploy it with this version of retryproof, or list receivers with retryproof receivers --region eu-west-1',
    );
  });

  it('an unknown stack is one line naming the region and the command that lists them, exit code 1', async () => {
    const out = await cli(['--stack', 'Nope', 'dlq', 'list']);
    expect(out).toEqual({ code: EXIT.failed, stdout: '', stderr: 'retryproof dlq list: no stack Nope in region eu-west-1; list them with retryproof receivers --region eu-west-1\n' });
  });
});

describe('retryproof receivers', () => {
  it('lists every receiver of every stack in the region, reading DescribeStacks page by page', async () => {
    // Prepare
    const calls: StubCalls = { commands: [] };
    // Act
    const out = await cli(['receivers', '--json'], stubAws(calls));
    // Assess: four stacks, one page each; the unrelated one has none.
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(calls.commands).toEqual(['DescribeStacksCommand', 'DescribeStacksCommand', 'DescribeStacksCommand', 'DescribeStacksCommand']);
    const rows = JSON.parse(out.stdout) as { stack: string; receiver: string; namePrefix: string; apiUrl: string }[];
    expect(rows.map((r) => [r.stack, r.receiver, r.namePrefix])).toEqual([
      ['Consumer', 'Payments', 'Consumer-Payments'],
      ['Consumer', 'Webhooks', 'Consumer-Webhooks'],
      ['Retryproof', 'Default', 'Retryproof'],
      ['Single', 'Orders', 'Single-Orders'],
    ]);
    for (const r of rows) expect(r.apiUrl).toMatch(/^https:\/\/a[0-9a-f]{8}\.execute-api\.eu-west-1\.amazonaws\.com\//);
  });

  it('--stack NAME lists that stack\'s receivers, as a table with the id --receiver takes', async () => {
    const out = await cli(['receivers', '--stack', 'Consumer']);
    expect(out.code, out.stderr).toBe(EXIT.ok);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^stack +receiver +prefix +region +api url$/);
    expect(lines[1]).toMatch(/^Consumer +Payments +Consumer-Payments +eu-west-1 +https:/);
    expect(lines[2]).toMatch(/^Consumer +Webhooks +Consumer-Webhooks +eu-west-1 +https:/);
    expect(lines[3]).toBe('2 receivers in stack Consumer (eu-west-1); pick one with --stack STACK --receiver RECEIVER');
  });

  it('is in the help, with every other verb', async () => {
    const out = await cli(['--help']);
    for (const verb of ['receivers', 'inspect', 'dlq list', 'dlq redrive', 'ledger', 'routes list', 'routes pause', 'routes resume', 'reconcile', 'wait']) {
      expect(out.stdout).toMatch(new RegExp(`^  ${verb} `, 'm'));
    }
    expect(out.stdout).toContain('--receiver ID');
  });
});
