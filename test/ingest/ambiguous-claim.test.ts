/**
 * Ambiguous writes of the ingest, driven through the SDK's real retry: a claim that commits
 * and loses its answer is sent again by the SDK (test/support/ambiguous-dynamodb.ts), and
 * the retry finds the record its own first attempt wrote. It must still be this delivery's
 * own creation: its work sent, answered 202, and the retry's extra hit no repeat.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_TTL_SECONDS } from '../../lambdas/config/route-config.ts';
import { DEFAULT_RESEND_AFTER_MS } from '../../lambdas/ingest/prepared-route.ts';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';
import { ambiguousDynamoDb, once } from '../support/ambiguous-dynamodb.ts';
import { noticeLog } from '../support/breaker-notices.ts';
import { ANSWER_MARGIN_MS } from '../../lambdas/ingest/ingest-delivery.ts';
import { fromRecordItem } from '../../lambdas/store/record-item.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

const ROUTE = 'stripe';

/** The UpdateItem of claimKey, by its expression (the only write that adds a hit). */
const isClaim = (input: Readonly<Record<string, unknown>>): boolean => String(input.UpdateExpression).includes('ADD hits');

async function scene(decide: Parameters<typeof ambiguousDynamoDb>[1]) {
  const plain = localDynamoClient(inject('dynamoEndpoint'));
  const table = await createEventsTable(plain, `events-amb-${randomUUID().slice(0, 8)}`);
  // The ingest's own client meets the faults; the test reads through a plain one.
  const faulty = localDynamoClient(inject('dynamoEndpoint'));
  ambiguousDynamoDb(faulty, decide);
  const clock = { now: Date.now() };
  const log = noticeLog();
  const states = new DynamoDbRouteStateStore(plain, table);
  const fx = await ingestFixture({
    tableName: table,
    store: new DynamoDbEventStore(faulty, table),
    breaker: { routeState: states },
    logger: log.logger,
    now: () => clock.now,
  });
  const key = uniqueKey(ROUTE);
  const record = async () =>
    (await documentClient(plain).send(new GetCommand({ TableName: table, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }))).Item;
  const deliver = () => fx.invoke(signedDelivery(ROUTE, key, { nowSeconds: Math.floor(clock.now / 1000) }));
  return { fx, clock, log, states, key, record, deliver };
}

describe('an ambiguous claimKey (committed, its answer lost, retried by the SDK)', () => {
  it('is still the first delivery: its work is sent and answered 202, not replayed', async () => {
    // Prepare: the claim's first attempt reaches DynamoDB, then its answer is lost as a 500.
    const fault = once('UpdateItemCommand', 'commit-then-error', isClaim);
    const s = await scene(fault);
    // Act
    const first = await s.deliver();
    // Assess: the SDK retried the claim, which found our own record (hits 2): ours all the same.
    expect(fault.fired()).toBe(true);
    expect(first.statusCode).toBe(202);
    expect(first.headers?.['idempotent-replayed']).toBeUndefined();
    expect(await s.fx.messagesInQueue()).toBe(1);
    expect(await s.record()).toMatchObject({ hits: 2, status: 'RECEIVED', claimId: expect.any(String) as string });
    // The worker's lease starts the count from both hits: the retry's is no repeat.
    expect(await s.fx.takeWork()).toBe(1);
    expect(await s.record()).toMatchObject({ hits: 2, status: 'EXECUTING', repeatBase: 2 });
  });

  it('does not count the retry’s hit as a repeat: the breaker pauses on the third copy after the 202, as without the fault', async () => {
    // Prepare
    const s = await scene(once('UpdateItemCommand', 'commit-then-error', isClaim));
    expect((await s.deliver()).statusCode).toBe(202);
    await s.fx.takeWork();
    // Act: three lost acknowledgements, each copy after our 202.
    const states: string[] = [];
    for (let i = 0; i < 3; i++) {
      s.clock.now += ANSWER_MARGIN_MS + 1;
      expect((await s.deliver()).statusCode).toBe(202);
      states.push((await s.states.get(ROUTE)).state);
    }
    // Assess
    expect(states).toEqual(['active', 'active', 'paused']);
    expect(s.log.notices().map((n) => n.repeats)).toEqual([3]);
  });

  it('recognises its own new generation over an expired record when the PutItem is retried after committing', async () => {
    // Prepare: a record past its TTL, still in the table (TTL deletes up to two days late).
    const fault = once('PutItemCommand', 'commit-then-error');
    const s = await scene(fault);
    expect((await s.deliver()).statusCode).toBe(202);
    s.clock.now += (DEFAULT_TTL_SECONDS + 1) * 1000;
    // Act: the key again; the new generation's put commits and loses its answer.
    const later = await s.deliver();
    // Assess: a new generation, sent, answered as the first acceptance.
    expect(fault.fired()).toBe(true);
    expect(later.statusCode).toBe(202);
    expect(later.headers?.['idempotent-replayed']).toBeUndefined();
    expect(await s.fx.messagesInQueue()).toBe(2);
    expect(await s.record()).toMatchObject({ receivedAt: s.clock.now, hits: 1 });
  });

  it('answers a resend at once when its markAnswered commits and loses its answer: the mark is never retried, so no copy counts before the answer', async () => {
    // Prepare: every attempt of the mark commits and errors; the attempts are counted.
    const isMark = (input: Readonly<Record<string, unknown>>): boolean => String(input.UpdateExpression).includes('repeatBase = hits');
    const markAttempts: number[] = [];
    const s = await scene((name, input, attempt) => {
      if (name !== 'UpdateItemCommand' || !isMark(input)) return 'ok';
      markAttempts.push(attempt);
      return 'commit-then-error';
    });
    // Act: accepted; its message is lost before a worker took it; a copy past the resend window
    // sends the work again and marks its answer.
    expect((await s.deliver()).statusCode).toBe(202);
    await s.fx.purgeQueue();
    s.clock.now += DEFAULT_RESEND_AFTER_MS + 1;
    const resent = await s.deliver();
    // Assess: one attempt, committed; the copy answered 202 all the same.
    expect(resent.statusCode).toBe(202);
    expect(markAttempts).toEqual([1]);
    expect(await s.record()).toMatchObject({ repeatBase: 2, resends: 1 });
  });

  it('announces a trip whose markBreakerTripped committed and lost its answer', async () => {
    // Prepare: the mark's first attempt commits; the SDK's retry is refused by it.
    const fault = once('UpdateItemCommand', 'commit-then-error', (input) => String(input.UpdateExpression).includes('breakerTrippedAt'));
    const s = await scene(fault);
    // Act: accepted (a worker takes its work), then three repeats.
    for (let i = 0; i < 4; i++) {
      s.clock.now += ANSWER_MARGIN_MS + 1;
      expect((await s.deliver()).statusCode).toBe(202);
      if (i === 0) await s.fx.takeWork();
    }
    // Assess: the write nonce made the refusal ours: one notice.
    expect(fault.fired()).toBe(true);
    expect((await s.states.get(ROUTE)).state).toBe('paused');
    expect(s.log.notices()).toHaveLength(1);
  });

  it("never counts a sender's copy twice when its claim committed and lost its answer: ADD hits ran twice", async () => {
    // Prepare: the second claim's first attempt commits, then its answer is lost as a 500.
    let claims = 0;
    const s = await scene((name, input, attempt) => {
      if (name !== 'UpdateItemCommand' || !isClaim(input)) return 'ok';
      if (attempt === 1) claims++;
      return claims === 2 && attempt === 1 ? 'commit-then-error' : 'ok';
    });
    const repeatsNow = async (): Promise<number | undefined> => {
      const item = await s.record();
      return item === undefined ? undefined : fromRecordItem(item).repeats;
    };
    // Act: accepted (a worker takes its work); a sender's copy 30 s later, its claim ambiguous; a real repeat 30 s after that.
    expect((await s.deliver()).statusCode).toBe(202);
    await s.fx.takeWork();
    s.clock.now += 30_000;
    expect((await s.deliver()).statusCode).toBe(202);
    const afterAmbiguous = await repeatsNow();
    const hitsThen: unknown = (await s.record())?.hits;
    s.clock.now += 30_000;
    expect((await s.deliver()).statusCode).toBe(202);
    // Assess: the doubled hit and the copy itself were taken out of the count (a missed count
    // at worst): the real repeat is the first, and the route stays active.
    expect(hitsThen).toBe(3);
    expect(afterAmbiguous).toBe(0);
    expect(await repeatsNow()).toBe(1);
    expect((await s.states.get(ROUTE)).state).toBe('active');
  });
  it("takes a failed claim's committed hits out of the count: the sender's retry of our 503 is one repeat, not three (seed 1580)", async () => {
    // Prepare: every attempt of the second copy's claim commits and loses its answer; the SDK
    // gives up after its four attempts and the ingest answers 503.
    let claims = 0;
    const s = await scene((name, input, attempt) => {
      if (name !== 'UpdateItemCommand' || !isClaim(input)) return 'ok';
      if (attempt === 1) claims++;
      return claims === 2 ? 'commit-then-error' : 'ok';
    });
    const repeatsNow = async (): Promise<number | undefined> => {
      const item = await s.record();
      return item === undefined ? undefined : fromRecordItem(item).repeats;
    };
    expect((await s.deliver()).statusCode).toBe(202);
    await s.fx.takeWork();
    // Act: a copy after our 202, its claim failed; the sender retries it.
    s.clock.now += ANSWER_MARGIN_MS + 1;
    expect((await s.deliver()).statusCode).toBe(503);
    const hitsThen: unknown = (await s.record())?.hits;
    s.clock.now += 1_000;
    expect((await s.deliver()).statusCode).toBe(202);
    // Assess: four hits landed for one copy; none of them counts, the retry counts one.
    expect(hitsThen).toBe(5);
    expect(await repeatsNow()).toBe(1);
    expect((await s.states.get(ROUTE)).state).toBe('active');
  });
});
