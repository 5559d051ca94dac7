/**
 * The replay memory (store/replay-memory.ts): on GitHub, Shopify and hmac-sha256, which sign
 * no timestamp, a captured delivery verifies at any age. Re-posted after its record's TTL,
 * when its work ran, it must pay nothing: answered as a duplicate, no message, no new record.
 * When its work never ran, the re-post is the only way it ever will. The clock is the
 * ingest's own (injected): the TTL passes without waiting. The worker's part is the executor
 * store's `rememberTaken`, the write executor/phases/run.ts makes after its lease.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_TTL_SECONDS } from '../../lambdas/config/route-config.ts';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { seenKey } from '../../lambdas/store/replay-memory.ts';
import { fingerprint } from '../../lambdas/domain/fingerprint.ts';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';
import { ingestFixture, recordKeyOf, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import type { Delivery } from '../support/ingest-fixture.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import type { SendOptions, WorkQueue } from '../../lambdas/ports/work-queue.ts';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';

const DAY_MS = 86_400_000;

/** A store whose replay memory is off: it says every body is new. What these tests show the memory is for. */
class ForgetfulStore extends DynamoDbEventStore {
  override takenBefore(): Promise<number | undefined> {
    return Promise.resolve(undefined);
  }
}

/** A store one of whose calls dies once, as a function killed at that point would. */
function dyingOnce<K extends 'takenBefore' | 'forgetReplay'>(method: K) {
  let deaths = 1;
  return class extends DynamoDbEventStore {
    override takenBefore(route: string, fp: string, receivedAt: number): Promise<number | undefined> {
      if (method === 'takenBefore' && deaths-- > 0) return Promise.reject(new Error('the function died here'));
      return super.takenBefore(route, fp, receivedAt);
    }
    override forgetReplay(route: string, key: string, receivedAt: number): Promise<void> {
      if (method === 'forgetReplay' && deaths-- > 0) return Promise.reject(new Error('the function died here'));
      return super.forgetReplay(route, key, receivedAt);
    }
  };
}

/** The work queue, whose first send dies with its function (a crash between the claim and the send). */
class DyingOnceQueue implements WorkQueue {
  inner: WorkQueue | undefined;
  #deaths = 1;
  send(message: WorkMessage, options?: SendOptions): Promise<void> {
    if (this.#deaths-- > 0) return Promise.reject(new Error('the function died here'));
    if (this.inner === undefined) throw new Error('no queue');
    return this.inner.send(message, options);
  }
}

async function scene(route: string, store?: (dynamo: ReturnType<typeof localDynamoClient>, table: string) => DynamoDbEventStore, queue?: DyingOnceQueue) {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const table = await createEventsTable(dynamo, `events-rm-${randomUUID().slice(0, 8)}`);
  const clock = { now: Date.now() };
  const fx = await ingestFixture({
    tableName: table,
    now: () => clock.now,
    ...(store === undefined ? {} : { store: store(dynamo, table) }),
    ...(queue === undefined ? {} : { queue }),
  });
  if (queue !== undefined) queue.inner = new SqsWorkQueue(fx.sqs, fx.queueUrl);
  const delivery = signedDelivery(route, uniqueKey(route));
  const key = recordKeyOf(delivery, 'unused');
  const doc = documentClient(dynamo);
  const record = async () =>
    (await doc.send(new GetCommand({ TableName: table, Key: { pk: recordPk(route, key), sk: RECORD_SK }, ConsistentRead: true }))).Item;
  /** DynamoDB's TTL deletes the expired record (up to 48 h late; here at once). */
  const ttlDeletes = async (): Promise<void> => {
    await doc.send(new DeleteCommand({ TableName: table, Key: { pk: recordPk(route, key), sk: RECORD_SK } }));
  };
  const memory = async () =>
    (await doc.send(new GetCommand({ TableName: table, Key: seenKey(route, fingerprint(Buffer.from(delivery.body))), ConsistentRead: true }))).Item;
  /** A worker takes the record's work: what the executor writes after its lease, before the action. */
  const workerTakes = async (): Promise<number> => {
    const taken = await record();
    const receivedAt = taken?.receivedAt as number;
    await new DynamoDbExecutionStore(dynamo, table).rememberTaken(route, fingerprint(Buffer.from(delivery.body)), receivedAt);
    return receivedAt;
  };
  return { fx, clock, delivery, key, record, ttlDeletes, memory, workerTakes };
}

const replayed = (answer: { statusCode?: number; headers?: Record<string, string | number | boolean> }) => [
  answer.statusCode,
  answer.headers?.['idempotent-replayed'],
];

describe.each(['github', 'shopify', 'hmac-sha256'] as const)('a captured %s delivery re-posted after its record expired', (route) => {
  it('is answered as a duplicate and pays nothing, whether TTL has deleted the record yet or not', async () => {
    // Prepare: the genuine delivery, accepted and queued.
    const s = await scene(route);
    const capture: Delivery = s.delivery;
    expect((await s.fx.invoke(capture)).statusCode).toBe(202);
    const takenAt = await s.workerTakes();
    // Act: past the TTL, the record still in the table (TTL lags); then a year later, the record deleted.
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    const expiredNotDeleted = await s.fx.invoke(capture);
    const afterExpiry = await s.record();
    await s.ttlDeletes();
    s.clock.now += 365 * DAY_MS;
    const yearLater = await s.fx.invoke(capture);
    // Assess: duplicates both; one message in all; the replays left no record of their own.
    expect(replayed(expiredNotDeleted)).toEqual([202, 'true']);
    expect(replayed(yearLater)).toEqual([202, 'true']);
    expect(JSON.parse(yearLater.body ?? '{}')).toEqual({ id: `${route}/${s.key}`, status: 'accepted' });
    expect(await s.fx.messagesInQueue()).toBe(1);
    expect(afterExpiry).toBeUndefined();
    expect(await s.record()).toBeUndefined();
    expect(await s.memory()).toMatchObject({ takenAt });
    expect((await s.memory())?.expiresAt).toBeUndefined();
  });

  it('is paid again when the memory is off: what the memory is for', async () => {
    const s = await scene(route, (dynamo, table) => new ForgetfulStore(dynamo, table));
    expect((await s.fx.invoke(s.delivery)).statusCode).toBe(202);
    await s.workerTakes();
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    await s.ttlDeletes();
    const replay = await s.fx.invoke(s.delivery);
    expect(replayed(replay)).toEqual([202, undefined]);
    expect(await s.fx.messagesInQueue()).toBe(2);
  });
});

describe('the replay memory across a crash', () => {
  const route = 'github';

  it('sees a sender’s retry through when the first function died at its memory read, and a later replay pays nothing', async () => {
    // Prepare: the first delivery's function dies after its claim, at its read of the memory.
    const s = await scene(route, (dynamo, table) => new (dyingOnce('takenBefore'))(dynamo, table));
    const died = await s.fx.invoke(s.delivery);
    const unsent = await s.fx.messagesInQueue();
    // Act: the sender retries our 5xx; a worker takes the work; past the TTL, the capture is replayed.
    const retry = await s.fx.invoke(s.delivery);
    const kept = await s.record();
    await s.workerTakes();
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    await s.ttlDeletes();
    const replay = await s.fx.invoke(s.delivery);
    // Assess: nothing was sent before the memory was read; the retry kept the payload; the worker's write is remembered.
    expect(died.statusCode).toBe(503);
    expect(unsent).toBe(0);
    expect(retry.statusCode).toBe(202);
    expect(kept?.body).toBe(s.delivery.body);
    expect(await s.memory()).toMatchObject({ takenAt: kept?.receivedAt as number });
    expect(replayed(replay)).toEqual([202, 'true']);
    expect(await s.record()).toBeUndefined();
  });

  it('runs a re-post as new work when the earlier generation never ran: its function died before the send, and no sender retried (seed 64)', async () => {
    // Prepare: the first delivery's function dies at its send, after its claim and the memory; nobody retries it; its record expires.
    const s = await scene(route, undefined, new DyingOnceQueue());
    const died = await s.fx.invoke(s.delivery);
    const stranded = await s.record();
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    await s.ttlDeletes();
    // Act: weeks later the same delivery is posted again (GitHub's "Redeliver", or a replay).
    const repost = await s.fx.invoke(s.delivery);
    // Assess: the first generation never sent anything; the re-post is accepted and queued, not dropped as a duplicate.
    expect(died.statusCode).toBe(503);
    expect(stranded).toMatchObject({ status: 'RECEIVED', runs: 0 });
    expect(replayed(repost)).toEqual([202, undefined]);
    expect(await s.fx.messagesInQueue()).toBe(1);
    expect(await s.record()).toMatchObject({ status: 'RECEIVED' });
  });

  it('takes back a replay’s generation on the next copy when the replay’s function died before it could', async () => {
    // Prepare: accepted; past the TTL a replay's function dies after its claim, before taking its generation back.
    const s = await scene(route, (dynamo, table) => new (dyingOnce('forgetReplay'))(dynamo, table));
    expect((await s.fx.invoke(s.delivery)).statusCode).toBe(202);
    await s.workerTakes();
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    await s.ttlDeletes();
    const died = await s.fx.invoke(s.delivery);
    const leftOver = await s.record();
    // Act: the next copy of the capture.
    const next = await s.fx.invoke(s.delivery);
    // Assess: the left-over generation never sent or kept anything, and the next copy took it back.
    expect(died.statusCode).toBe(503);
    expect(leftOver).toMatchObject({ status: 'RECEIVED', runs: 0 });
    expect(leftOver?.body).toBeUndefined();
    expect(replayed(next)).toEqual([202, 'true']);
    expect(await s.record()).toBeUndefined();
    expect(await s.fx.messagesInQueue()).toBe(1);
  });
});

describe('a replay memory item written before the memory recorded runs', () => {
  it('still refuses a replay: an item with only firstAt (the claim that wrote it) reads as taken then', async () => {
    // Prepare: accepted; the memory item as the first protocol v3 wrote it, at the claim.
    const s = await scene('github');
    expect((await s.fx.invoke(s.delivery)).statusCode).toBe(202);
    const receivedAt = (await s.record())?.receivedAt as number;
    await documentClient(localDynamoClient(inject('dynamoEndpoint'))).send(
      new PutCommand({ TableName: s.fx.tableName, Item: { ...seenKey('github', fingerprint(Buffer.from(s.delivery.body))), firstAt: receivedAt } }),
    );
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    await s.ttlDeletes();
    // Act
    const replay = await s.fx.invoke(s.delivery);
    // Assess
    expect(replayed(replay)).toEqual([202, 'true']);
    expect(await s.fx.messagesInQueue()).toBe(1);
  });
});

describe('a route whose scheme signs a timestamp', () => {
  it('keeps no replay memory: the tolerance window refuses an old capture', async () => {
    const s = await scene('stripe');
    expect((await s.fx.invoke(s.delivery)).statusCode).toBe(202);
    expect(await s.memory()).toBeUndefined();
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    expect((await s.fx.invoke(s.delivery)).statusCode).toBe(401);
  });
});
