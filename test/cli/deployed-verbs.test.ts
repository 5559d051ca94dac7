/**
 * Every verb on a deployed receiver, found as the CLI finds one on AWS: the app's own stack
 * (receiver Default, with the demo's ledger), really synthesized, its outputs and template
 * served by a CloudFormation stub (there is no CloudFormation emulator), and its table, ledger
 * and queues standing in DynamoDB Local and fauxqs under the physical names the stub resolves
 * its Refs to. So `--stack Retryproof` reaches real tables and queues through the descriptor
 * alone. fauxqs has no message move tasks: for `dlq redrive` the SQS client answers
 * StartMessageMoveTask and ListMessageMoveTasks itself, as SQS documents them. `reconcile` runs
 * the receiver's own function, through a Lambda stub: deployed-reconcile.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { AwsClients } from '../../cli/aws-clients.ts';
import { EXIT } from '../../cli/errors.ts';
import { runCli } from '../../cli/main.ts';
import { createEventsTable, createLedgerTable, createQueuePair, localDynamoClient, localS3Client, localSqsClient } from '../../local/aws-clients.ts';
import { logicalIdOf, synthesize } from '../cdk/stack-fixture.ts';
import { cloudFormationStub, deployedStack, receiverIds } from './cloudformation-stub.ts';

const built = synthesize({
  demo: true,
  routes: [{ name: 'demo', signature: { scheme: 'standard-webhooks' }, secretName: 'retryproof/demo', actionTimeSeconds: 10, action: 'payout' }],
  reconciliation: { windowHours: 24, everyMinutes: 60, settleSeconds: 300, stuckAfterSeconds: 900 },
});

// The receiver's resources, made where the tests can reach them, under names of this run.
const run = randomUUID().slice(0, 8);
const setupDynamo = localDynamoClient(inject('dynamoEndpoint'));
const setupSqs = localSqsClient(inject('sqsEndpoint'));
const eventsTable = await createEventsTable(setupDynamo, `deployed-events-${run}`);
const ledgerTable = await createLedgerTable(setupDynamo, `deployed-ledger-${run}`);
const queues = await createQueuePair(setupSqs, inject('sqsEndpoint'), `deployed-${run}`, { maxReceiveCount: 5 });
const ids = receiverIds(built.stack.receiver);
const STACK = deployedStack(built.stack, {
  [ids.table]: eventsTable,
  [logicalIdOf(built, 'Ledger/Table')]: ledgerTable,
  [ids.queue]: queues.queueUrl,
  [ids.dlq]: queues.dlqUrl,
});
afterAll(() => {
  setupDynamo.destroy();
  setupSqs.destroy();
});

/** SQS with the two move-task calls answered as SQS would for a DLQ of `toMove` messages (fauxqs has neither). */
function withMoveTasks(client: SQSClient, toMove: () => number): SQSClient {
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'StartMessageMoveTaskCommand') return Promise.resolve({ output: { TaskHandle: 'task-1', $metadata: {} }, response: {} });
      if (context.commandName === 'ListMessageMoveTasksCommand') {
        const n = toMove();
        return Promise.resolve({
          output: { Results: [{ TaskHandle: 'task-1', Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: n, ApproximateNumberOfMessagesToMove: n }], $metadata: {} },
          response: {},
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'moveTasksAsSqs' },
  );
  return client;
}

let dlqDepth = 0;
const aws: AwsClients = {
  region: () => Promise.resolve('eu-west-1'),
  cloudFormation: () => cloudFormationStub([STACK]),
  dynamo: () => localDynamoClient(inject('dynamoEndpoint')),
  sqs: () => withMoveTasks(localSqsClient(inject('sqsEndpoint')), () => dlqDepth),
  s3: () => localS3Client(inject('sqsEndpoint')),
  // No verb here invokes a function (reconcile's own test does).
  lambda: (region) => new LambdaClient({ region, endpoint: 'http://127.0.0.1:9', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
};

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['--stack', 'Retryproof', ...argv], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stderrIsTty: false, env: {}, aws });
  return { code, stdout, stderr };
}

describe('every verb on a deployed receiver, through its descriptor', () => {
  it('receivers lists it', async () => {
    const out = await cli('receivers', '--json');
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(JSON.parse(out.stdout)).toEqual([expect.objectContaining({ stack: 'Retryproof', receiver: 'Default', eventsTable, ledgerTable, queueUrl: queues.queueUrl })]);
  });

  it('routes list, pause and resume act on the routes of the deployed configuration', async () => {
    expect(JSON.parse((await cli('routes', 'list', '--json')).stdout)).toEqual([expect.objectContaining({ route: 'demo', state: 'active' })]);
    expect(JSON.parse((await cli('routes', 'pause', 'demo', '--reason', 'test', '--json')).stdout)).toEqual({ route: 'demo', paused: true });
    expect(JSON.parse((await cli('routes', 'list', '--json')).stdout)).toEqual([expect.objectContaining({ route: 'demo', state: 'paused', reason: 'test' })]);
    // A long reason: cut in the table, whole in --json.
    const long = `test ${'x'.repeat(150)}`;
    await cli('routes', 'resume', 'demo');
    await cli('routes', 'pause', 'demo', '--reason', long);
    const text = (await cli('routes', 'list')).stdout.split('\n');
    expect(text.find((l) => l.startsWith('demo '))).toMatch(/ test x+…$/);
    expect(Math.max(...text.filter((l) => !l.startsWith('demo:')).map((l) => l.length))).toBeLessThanOrEqual(100);
    expect(JSON.parse((await cli('routes', 'list', '--json')).stdout)).toEqual([expect.objectContaining({ route: 'demo', state: 'paused', reason: long })]);
    expect(JSON.parse((await cli('routes', 'resume', 'demo', '--json')).stdout)).toEqual({ route: 'demo', resumed: true, reenqueued: 0 });
    const stripe = await cli('routes', 'pause', 'stripe');
    expect(stripe.code).toBe(EXIT.usage);
    expect(stripe.stderr.split('\n')[0]).toBe('retryproof routes pause: unknown route "stripe"; the routes of stack Retryproof: demo');
  });

  it('inspect reads the receiver\'s table: no record, exit code 1', async () => {
    const out = await cli('inspect', 'demo', 'never-sent');
    expect(out.code).toBe(EXIT.failed);
    expect(out.stdout).toContain('no record for demo/never-sent (never received, or expired)');
  });

  it('ledger reads the demo ledger the descriptor names', async () => {
    const out = await cli('ledger', '--json');
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(JSON.parse(out.stdout)).toEqual([]);
  });

  it('dlq list reads the receiver\'s DLQ, and dlq redrive follows a move task to its end, naming a message that will only come back', async () => {
    // Prepare
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const body = (route: string, key: string): string =>
      JSON.stringify({ v: 1, route, key, fingerprint: 'f'.repeat(64), receivedAt: Date.now(), body: '{}', bodyEncoding: 'utf8', headers: {}, reason: 'permanent error' });
    await sqs.send(new SendMessageCommand({ QueueUrl: queues.dlqUrl, MessageBody: body('demo', 'k-1') }));
    await sqs.send(new SendMessageCommand({ QueueUrl: queues.dlqUrl, MessageBody: body('old-route', 'k-2') }));
    sqs.destroy();
    dlqDepth = 2;
    // Act
    const listed = await cli('dlq', 'list', '--json');
    const redriven = await cli('dlq', 'redrive');
    // Assess
    expect((JSON.parse(listed.stdout) as { route: string }[]).map((r) => r.route).sort()).toEqual(['demo', 'old-route']);
    expect(redriven.code, redriven.stderr).toBe(EXIT.ok);
    expect(redriven.stdout).toBe(
      'will come back to the DLQ: old-route/k-2: route "old-route" is not in the configuration stack Retryproof runs\nmove task task-1: COMPLETED, 2 moved\n',
    );
    expect(redriven.stderr).toBe('redrive: 2/2 moved\n');
  });

  it('wait is for the local stack only', async () => {
    const out = await cli('wait');
    expect(out.code).toBe(EXIT.usage);
  });
});
