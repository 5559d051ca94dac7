/**
 * The CLI on a deployed receiver whose route `slow` has a queue of its own, found as in
 * deployed-verbs.test.ts: the app really synthesized, its outputs served by a CloudFormation
 * stub, its table and queues standing in DynamoDB Local and fauxqs under the physical names
 * the stub resolves its Refs to. The descriptor names slow's queue (routeQueueUrls); `routes
 * list` shows every queue's depth; `dlq redrive` starts its move task without a destination,
 * so SQS returns each message to the queue it came from (SQS API Reference,
 * StartMessageMoveTask, DestinationArn), slow's own or the shared one. fauxqs has no move
 * tasks: the SQS client answers them itself, and keeps the request it was given.
 */
import { randomUUID } from 'node:crypto';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient, StartMessageMoveTaskCommandInput } from '@aws-sdk/client-sqs';
import { Stack } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { AwsClients } from '../../cli/aws-clients.ts';
import { EXIT } from '../../cli/errors.ts';
import { runCli } from '../../cli/main.ts';
import { createEventsTable, createQueuePair, ensureRouteQueue, localDynamoClient, localS3Client, localSqsClient } from '../../local/aws-clients.ts';
import { synthesize } from '../cdk/stack-fixture.ts';
import { cloudFormationStub, deployedStack, receiverIds } from './cloudformation-stub.ts';

const built = synthesize({
  routes: [
    { name: 'fast', signature: { scheme: 'standard-webhooks' }, secretName: 'retryproof/fast', actionTimeSeconds: 10, action: 'handle' },
    { name: 'slow', signature: { scheme: 'standard-webhooks' }, secretName: 'retryproof/slow', actionTimeSeconds: 10, action: 'handle', rateLimit: { perSecond: 1 }, concurrency: 25 },
  ],
  actions: { handle: { entry: 'actions/handle-stripe-event.ts' } },
});

// The receiver's resources, made where the tests can reach them, under names of this run.
const run = randomUUID().slice(0, 8);
const setupDynamo = localDynamoClient(inject('dynamoEndpoint'));
const setupSqs = localSqsClient(inject('sqsEndpoint'));
const eventsTable = await createEventsTable(setupDynamo, `deployed-rq-events-${run}`);
const queues = await createQueuePair(setupSqs, inject('sqsEndpoint'), `deployed-rq-${run}`, { maxReceiveCount: 5 });
const dlqArn = (await setupSqs.send(new GetQueueAttributesCommand({ QueueUrl: queues.dlqUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';
const slowQueue = await ensureRouteQueue(setupSqs, inject('sqsEndpoint'), `deployed-rq-${run}-slow`, { dlqArn, maxReceiveCount: 5, visibilityTimeoutSeconds: 30 });
const ids = receiverIds(built.stack.receiver);
const slowQueueConstruct = built.stack.receiver.routeQueues.get('slow');
if (slowQueueConstruct === undefined) throw new Error('the synthesized receiver has no queue for route slow');
const STACK = deployedStack(built.stack, {
  [ids.table]: eventsTable,
  [ids.queue]: queues.queueUrl,
  [ids.dlq]: queues.dlqUrl,
  [Stack.of(slowQueueConstruct).getLogicalId(slowQueueConstruct.node.defaultChild as CfnElement)]: slowQueue.queueUrl,
});
afterAll(() => {
  setupDynamo.destroy();
  setupSqs.destroy();
});

/** The move tasks this client was asked to start. */
const started: StartMessageMoveTaskCommandInput[] = [];

/** SQS with the two move-task calls answered as SQS would (fauxqs has neither), keeping each start's input. */
function withMoveTasks(client: SQSClient): SQSClient {
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'StartMessageMoveTaskCommand') {
        started.push(args.input as StartMessageMoveTaskCommandInput);
        return Promise.resolve({ output: { TaskHandle: 'task-rq', $metadata: {} }, response: {} });
      }
      if (context.commandName === 'ListMessageMoveTasksCommand') {
        return Promise.resolve({
          output: { Results: [{ TaskHandle: 'task-rq', Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 2, ApproximateNumberOfMessagesToMove: 2 }], $metadata: {} },
          response: {},
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'moveTasksAsSqs' },
  );
  return client;
}

const aws: AwsClients = {
  region: () => Promise.resolve('eu-west-1'),
  cloudFormation: () => cloudFormationStub([STACK]),
  dynamo: () => localDynamoClient(inject('dynamoEndpoint')),
  sqs: () => withMoveTasks(localSqsClient(inject('sqsEndpoint'))),
  s3: () => localS3Client(inject('sqsEndpoint')),
  lambda: (region) => new LambdaClient({ region, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
};

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['--stack', 'Retryproof', ...argv], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stderrIsTty: false, env: {}, aws });
  return { code, stdout, stderr };
}

const deadLetter = (route: string, key: string): string =>
  JSON.stringify({ v: 1, route, key, fingerprint: 'f'.repeat(64), receivedAt: Date.now(), body: '{}', bodyEncoding: 'utf8', headers: {}, reason: 'permanent error' });

describe('the CLI on a deployed receiver with a route on its own queue', () => {
  it('receivers lists the route\'s own queue from the descriptor', async () => {
    const out = await cli('receivers', '--json');
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(JSON.parse(out.stdout)).toEqual([expect.objectContaining({ queueUrl: queues.queueUrl, routeQueueUrls: { slow: slowQueue.queueUrl } })]);
  });

  it('routes list shows the depth of the shared queue, slow\'s own queue and the DLQ', async () => {
    // Prepare
    await setupSqs.send(new SendMessageCommand({ QueueUrl: slowQueue.queueUrl, MessageBody: deadLetter('slow', 'w-1'), DelaySeconds: 900 }));
    // Act
    const json = await cli('routes', 'list', '--json');
    const text = await cli('routes', 'list');
    // Assess
    expect(json.code, json.stderr).toBe(EXIT.ok);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ route: 'fast', queue: { queue: `deployed-rq-${run}`, kind: 'shared', visible: 0, inFlight: 0, delayed: 0 } }),
      expect.objectContaining({ route: 'slow', queue: { queue: `deployed-rq-${run}-slow`, kind: 'route', visible: 0, inFlight: 0, delayed: 1 } }),
    ]);
    const rows = text.stdout.split('\n').map((line) => line.trim().split(/\s{2,}/));
    expect(rows).toContainEqual(['slow', 'active', '-', 'own']);
    expect(rows).toContainEqual([`deployed-rq-${run}-slow`, '0', '0', '1', 'slow (own queue)']);
    expect(rows).toContainEqual([`deployed-rq-${run}-dlq`, '0', '0', '0', 'dead letters (DLQ)']);
  });

  it('dlq redrive starts a move task without a destination, so each message returns to its source queue', async () => {
    // Prepare
    await setupSqs.send(new SendMessageCommand({ QueueUrl: queues.dlqUrl, MessageBody: deadLetter('slow', 'k-1') }));
    await setupSqs.send(new SendMessageCommand({ QueueUrl: queues.dlqUrl, MessageBody: deadLetter('fast', 'k-2') }));
    // Act
    const out = await cli('dlq', 'redrive');
    const json = await cli('dlq', 'redrive', '--detach', '--json');
    // Assess
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(out.stdout).toBe('move task task-rq: COMPLETED, 2 moved back to their source queues\n');
    expect(started).toHaveLength(2);
    expect(started[0]?.SourceArn).toMatch(/^arn:aws:sqs:/);
    expect(started[0]).not.toHaveProperty('DestinationArn');
    expect(JSON.parse(json.stdout)).toMatchObject({ mode: 'move-task', destination: 'source queues', status: 'RUNNING' });
  });
});
