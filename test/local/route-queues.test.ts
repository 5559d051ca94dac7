/**
 * The local stack's per-route queues, piece by piece on the run's fauxqs: the names (as the
 * construct's), a route queue dead-lettering into the Region's one DLQ, fauxqs honouring a
 * send's DelaySeconds (the executor's deferral of rate-limited work is a delayed wake-up), a
 * visibility change landing on the queue the message came from, and a route's many workers
 * polling an empty queue through one of them. A handful of messages each: no storm.
 */
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { routeQueueName } from '../../lib/stateful/work-queue.ts';
import { createQueuePair, ensureRouteQueue, localSqsClient } from '../../local/aws-clients.ts';
import { startPoller } from '../../local/executor-poller.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { localMessageVisibility } from '../../local/local-message-visibility.ts';
import { localRouteConcurrency, localRouteQueueName, regionQueueNames } from '../../local/route-queues.ts';
import { SettingsError } from '../../local/settings-error.ts';

const endpoint = inject('sqsEndpoint');
const sqs = localSqsClient(endpoint);
afterAll(() => {
  sqs.destroy();
});

/** Resolves once `check` holds, polling every 50 ms; fails after `withinMs`. */
async function until<T>(check: () => Promise<T | undefined>, withinMs: number, what: string): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function receiveOne(client: SQSClient, queueUrl: string, visibility = 30): Promise<{ body: string; receiptHandle: string; receiveCount: number } | undefined> {
  const out = await client.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, VisibilityTimeout: visibility, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }),
  );
  const m = out.Messages?.[0];
  if (m === undefined) return undefined;
  return { body: m.Body ?? '', receiptHandle: m.ReceiptHandle ?? '', receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 0) };
}

/** A work queue, its DLQ and one route queue beside them, under names of this test. */
async function queuesOfThisTest(maxReceiveCount = 5): Promise<{ shared: string; dlq: string; route: { queueUrl: string; queueArn: string } }> {
  const stem = `rq-${randomUUID().slice(0, 8)}`;
  const pair = await createQueuePair(sqs, endpoint, stem, { maxReceiveCount, visibilityTimeoutSeconds: 30 });
  const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: pair.dlqUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';
  const route = await ensureRouteQueue(sqs, endpoint, localRouteQueueName(stem, 'slow'), { dlqArn, maxReceiveCount, visibilityTimeoutSeconds: 30 });
  return { shared: pair.queueUrl, dlq: pair.dlqUrl, route };
}

describe('local route queue names', () => {
  it('names a route queue as the construct does, with the region\'s work queue for <prefix>-work, short or cut to 80', () => {
    expect(localRouteQueueName('retryproof-work', 'slow')).toBe(routeQueueName('retryproof', 'slow'));
    // A route name is up to 63 characters: past 80 only with a longer prefix (another Region's queue).
    const prefix = `retryproof-${'x'.repeat(20)}`;
    const long = 'r'.repeat(63);
    expect(localRouteQueueName(`${prefix}-work`, long)).toBe(routeQueueName(prefix, long));
    expect(localRouteQueueName(`${prefix}-work`, long)).toHaveLength(80);
  });

  it('gives each region a queue per isolated route and none to a route on the shared queue', () => {
    const config = resolveConfig({
      routes: [
        { name: 'slow', signature: { scheme: 'standard-webhooks' }, secretName: 's', action: 'a', actionTimeSeconds: 5, rateLimit: { perSecond: 1 }, concurrency: 25 },
        { name: 'peer', signature: { scheme: 'standard-webhooks' }, secretName: 's', action: 'a', actionTimeSeconds: 5, rateLimit: { perSecond: 1 }, ownQueue: false },
        { name: 'fast', signature: { scheme: 'standard-webhooks' }, secretName: 's', action: 'a', actionTimeSeconds: 5 },
      ],
    });
    const names = regionQueueNames(['retryproof-work', 'retryproof-work-local-2'], config);
    expect(names.map((r) => [r.queue, [...r.routeQueues]])).toEqual([
      ['retryproof-work', [['slow', 'retryproof-work-slow']]],
      ['retryproof-work-local-2', [['slow', 'retryproof-work-local-2-slow']]],
    ]);
    expect(localRouteConcurrency(config.routes[0] ?? { concurrency: undefined }, 3)).toBe(25);
  });

  it('refuses a route whose queue would be another region\'s work queue, naming both', () => {
    const config = resolveConfig({
      routes: [{ name: 'local-2', signature: { scheme: 'standard-webhooks' }, secretName: 's', action: 'a', actionTimeSeconds: 5, concurrency: 2 }],
    });
    expect(() => regionQueueNames(['retryproof-work', 'retryproof-work-local-2'], config)).toThrow(SettingsError);
    expect(() => regionQueueNames(['retryproof-work', 'retryproof-work-local-2'], config)).toThrow(
      "route local-2's own queue beside retryproof-work and the work queue retryproof-work-local-2 would both be the local queue retryproof-work-local-2",
    );
  });
});

describe('route queues on fauxqs', () => {
  it('dead-letters a route queue\'s message into the region\'s one DLQ after maxReceiveCount receives', async () => {
    // Prepare
    const q = await queuesOfThisTest(1);
    await sqs.send(new SendMessageCommand({ QueueUrl: q.route.queueUrl, MessageBody: 'to-the-dlq' }));
    // Act: the first receive takes the one receive allowed; the message then leaves for the DLQ.
    const first = await receiveOne(sqs, q.route.queueUrl, 1);
    const inDlq = await until(() => receiveOne(sqs, q.dlq).then(async (m) => m ?? (await receiveOne(sqs, q.route.queueUrl, 1), undefined)), 10_000, 'the message in the DLQ');
    // Assess
    expect(first?.body).toBe('to-the-dlq');
    expect(inDlq.body).toBe('to-the-dlq');
  });

  it('keeps a message sent with DelaySeconds out of receives until its delay is over, counting it as delayed', async () => {
    // Prepare
    const q = await queuesOfThisTest();
    const sentAt = Date.now();
    // Act
    await sqs.send(new SendMessageCommand({ QueueUrl: q.route.queueUrl, MessageBody: 'wake-up', DelaySeconds: 2 }));
    const early = await receiveOne(sqs, q.route.queueUrl);
    const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.route.queueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }));
    const late = await until(() => receiveOne(sqs, q.route.queueUrl), 10_000, 'the delayed message');
    // Assess
    expect(early).toBeUndefined();
    expect(attrs.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
    expect(late.body).toBe('wake-up');
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(1900);
  });

  it('changes a message\'s visibility on the route queue it came from, not on the shared queue', async () => {
    // Prepare: a message held for 30 s on the route queue.
    const q = await queuesOfThisTest();
    await sqs.send(new SendMessageCommand({ QueueUrl: q.route.queueUrl, MessageBody: 'hand-back' }));
    const held = await until(() => receiveOne(sqs, q.route.queueUrl, 30), 5000, 'the message');
    const visibility = localMessageVisibility(sqs, [q.shared, q.route.queueUrl]);
    // Act: released (1 s on fauxqs) by its source ARN, as the executor does with eventSourceARN.
    await visibility.changeVisibility(held.receiptHandle, 0, q.route.queueArn);
    // Assess: back on its own queue long before its 30 s (fauxqs takes any receipt handle on any
    // queue, so only the message coming back shows where the call went).
    const back = await until(() => receiveOne(sqs, q.route.queueUrl), 10_000, 'the message back on the route queue');
    expect(back.body).toBe('hand-back');
    expect(back.receiveCount).toBe(2);
  });

  it('runs a route\'s workers on its queue, one of them polling while it is empty, all of them once work comes', async () => {
    // Prepare: a count of receives, and a handler that holds each batch until 4 run at once.
    const q = await queuesOfThisTest();
    const client = localSqsClient(endpoint);
    // Receives made, and the most in flight at once among those after the workers' first ones.
    let receives = 0;
    let receiving = 0;
    let mostReceivingIdle = 0;
    let idle = true;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'ReceiveMessageCommand') return next(args);
        receives++;
        receiving++;
        if (idle && receives > 12) mostReceivingIdle = Math.max(mostReceivingIdle, receiving);
        try {
          return await next(args);
        } finally {
          receiving--;
        }
      },
      { step: 'initialize', name: 'countReceives' },
    );
    let running = 0;
    let most = 0;
    let sources = new Set<string>();
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handler = async (event: SQSEvent): Promise<{ batchItemFailures: [] }> => {
      running++;
      most = Math.max(most, running);
      sources = new Set([...sources, ...event.Records.map((r) => r.eventSourceARN)]);
      if (running >= 4) release();
      await released;
      running--;
      return { batchItemFailures: [] };
    };
    const poller = startPoller({
      handler,
      sqs: client,
      queueUrl: q.route.queueUrl,
      queueArn: q.route.queueArn,
      batchSize: 1,
      concurrency: 8,
      parkIdleWorkers: true,
      idleMs: 20,
      context: () => lambdaContext('executor'),
    });
    try {
      // Act: 30 receives of an empty queue; then work for several.
      await until(() => Promise.resolve(receives >= 30 ? true : undefined), 10_000, '30 idle receives');
      idle = false;
      const idleReceives = receives;
      const idleRounds = poller.stats.batches;
      for (let i = 0; i < 6; i++) await sqs.send(new SendMessageCommand({ QueueUrl: q.route.queueUrl, MessageBody: `m-${i}` }));
      await until(() => Promise.resolve(poller.stats.deleted >= 6 ? true : undefined), 20_000, 'six messages run and deleted');
      // Assess: while idle, after each worker's first receive, one receive at a time (the one polling).
      expect(idleRounds).toBe(0);
      expect(mostReceivingIdle).toBe(1);
      expect(receives).toBeGreaterThan(idleReceives);
      expect(most).toBeGreaterThanOrEqual(4);
      expect([...sources]).toEqual([q.route.queueArn]);
    } finally {
      release();
      await poller.stop('drain');
      client.destroy();
    }
  });
});
