/**
 * The replay memory (store/replay-memory.ts): on GitHub, Shopify and hmac-sha256, which sign
 * no timestamp, a captured delivery verifies at any age. Re-posted after its record's TTL,
 * it must pay nothing: answered as a duplicate, no message, no new record. The clock is the
 * ingest's own (injected): the TTL passes without waiting.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_TTL_SECONDS } from '../../lambdas/config/route-config.ts';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { seenKey } from '../../lambdas/store/replay-memory.ts';
import { fingerprint } from '../../lambdas/domain/fingerprint.ts';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';
import { ingestFixture, recordKeyOf, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import type { Delivery } from '../support/ingest-fixture.ts';

const DAY_MS = 86_400_000;

/** A store whose replay memory is off: it says every body is new. What these tests show the memory is for. */
class ForgetfulStore extends DynamoDbEventStore {
  override rememberBody(_route: string, _fingerprint: string, receivedAt: number): Promise<number> {
    return Promise.resolve(receivedAt);
  }
}

/** A store one of whose calls dies once, as a function killed at that point would. */
function dyingOnce<K extends 'rememberBody' | 'forgetReplay'>(method: K) {
  let deaths = 1;
  return class extends DynamoDbEventStore {
    override rememberBody(route: string, fp: string, receivedAt: number): Promise<number> {
      if (method === 'rememberBody' && deaths-- > 0) return Promise.reject(new Error('the function died here'));
      return super.rememberBody(route, fp, receivedAt);
    }
    override forgetReplay(route: string, key: string, receivedAt: number): Promise<void> {
      if (method === 'forgetReplay' && deaths-- > 0) return Promise.reject(new Error('the function died here'));
      return super.forgetReplay(route, key, receivedAt);
    }
  };
}

async function scene(route: string, store?: (dynamo: ReturnType<typeof localDynamoClient>, table: string) => DynamoDbEventStore) {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const table = await createEventsTable(dynamo, `events-rm-${randomUUID().slice(0, 8)}`);
  const clock = { now: Date.now() };
  const fx = await ingestFixture({ tableName: table, now: () => clock.now, ...(store === undefined ? {} : { store: store(dynamo, table) }) });
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
  return { fx, clock, delivery, key, record, ttlDeletes, memory };
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
    const firstAt = s.clock.now;
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
    expect(await s.memory()).toMatchObject({ firstAt });
    expect((await s.memory())?.expiresAt).toBeUndefined();
  });

  it('is paid again when the memory is off: what the memory is for', async () => {
    const s = await scene(route, (dynamo, table) => new ForgetfulStore(dynamo, table));
    expect((await s.fx.invoke(s.delivery)).statusCode).toBe(202);
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    await s.ttlDeletes();
    const replay = await s.fx.invoke(s.delivery);
    expect(replayed(replay)).toEqual([202, undefined]);
    expect(await s.fx.messagesInQueue()).toBe(2);
  });
});

describe('the replay memory across a crash', () => {
  const route = 'github';

  it('is written by the sender’s retry when the first function died between its claim and the memory: a later replay still pays nothing', async () => {
    // Prepare: the first delivery's function dies after its claim, before remembering the body.
    const s = await scene(route, (dynamo, table) => new (dyingOnce('rememberBody'))(dynamo, table));
    const died = await s.fx.invoke(s.delivery);
    const unsent = await s.fx.messagesInQueue();
    // Act: the sender retries our 5xx; then, past the TTL, the capture is replayed.
    const retry = await s.fx.invoke(s.delivery);
    const kept = await s.record();
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    await s.ttlDeletes();
    const replay = await s.fx.invoke(s.delivery);
    // Assess: nothing was sent before the body was remembered; the retry remembered it and kept the payload.
    expect(died.statusCode).toBe(503);
    expect(unsent).toBe(0);
    expect(retry.statusCode).toBe(202);
    expect(kept?.body).toBe(s.delivery.body);
    expect(await s.memory()).toMatchObject({ firstAt: kept?.receivedAt as number });
    expect(replayed(replay)).toEqual([202, 'true']);
    expect(await s.record()).toBeUndefined();
  });

  it('takes back a replay’s generation on the next copy when the replay’s function died before it could', async () => {
    // Prepare: accepted; past the TTL a replay's function dies after its claim, before taking its generation back.
    const s = await scene(route, (dynamo, table) => new (dyingOnce('forgetReplay'))(dynamo, table));
    expect((await s.fx.invoke(s.delivery)).statusCode).toBe(202);
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

describe('a route whose scheme signs a timestamp', () => {
  it('keeps no replay memory: the tolerance window refuses an old capture', async () => {
    const s = await scene('stripe');
    expect((await s.fx.invoke(s.delivery)).statusCode).toBe(202);
    expect(await s.memory()).toBeUndefined();
    s.clock.now += DEFAULT_TTL_SECONDS * 1000 + DAY_MS;
    expect((await s.fx.invoke(s.delivery)).statusCode).toBe(401);
  });
});
