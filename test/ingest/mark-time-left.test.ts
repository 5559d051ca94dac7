/**
 * A resend's mark (a copy that sent the work again starts the breaker's count; a new delivery's
 * count starts at its worker's lease) is the last write before the answer, and the answer must follow it: a function its
 * timeout kills after the mark committed has marked an answer no sender got, and the sender's
 * retries would count as circuit-breaker repeats. So the mark is not made with less than
 * MARK_ANSWERED_RESERVE_MS of the invocation left (found by the simulation's shape of seed
 * 1683: an ingest cut off inside its mark, and a burst of retries 11 s on tripped the breaker).
 * Nor is it made when more than MARK_ANSWERED_MAX_MS passed between its stamp and its request:
 * the answer would leave later than ANSWER_MARGIN_MS allows for (seed 860: a function paused
 * 1.03 s there, and three copies that raced its answer counted as repeats).
 */
import { describe, expect, inject, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { MARK_ANSWERED_MAX_MS, MARK_ANSWERED_RESERVE_MS } from '../../lambdas/config/route-config.ts';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { DEFAULT_RESEND_AFTER_MS } from '../../lambdas/ingest/prepared-route.ts';

const ROUTE = 'stripe';

/**
 * A store whose markAnswered starts its request `pauseMs` after the ingest stamped it: the
 * invocation's time left (the monotonic count the ingest measures the pause on) drops by as much.
 */
class PausingStore extends DynamoDbEventStore {
  leftMs = 30_000;
  pauseMs = 0;
  override async markAnswered(route: string, key: string, receivedAt: number, markAtMs: number, budgetMs?: () => number): Promise<void> {
    this.leftMs -= this.pauseMs;
    await super.markAnswered(route, key, receivedAt, markAtMs, budgetMs);
  }
}

/**
 * One signed delivery through the real handler, its message lost before a worker took it, and a
 * copy past the resend window that sends the work again and marks its answer. `timeLeftMs`: what
 * the copy's invocation has left when it starts; `pauseMs`: how long it pauses between the mark's
 * stamp and its request.
 */
async function deliver(options: { readonly timeLeftMs?: number; readonly pauseMs?: number }) {
  const ddb = localDynamoClient(inject('dynamoEndpoint'));
  const store = new PausingStore(ddb, inject('eventsTable'));
  store.leftMs = options.timeLeftMs ?? store.leftMs;
  store.pauseMs = options.pauseMs ?? 0;
  const fx = await ingestFixture({ store });
  const key = uniqueKey(ROUTE);
  expect((await fx.invoke(signedDelivery(ROUTE, key))).statusCode).toBe(202);
  await fx.purgeQueue();
  fx.advance(DEFAULT_RESEND_AFTER_MS + 1);
  // middy's first read arms its own timeout in real time, which a slow machine would hit: only the ingest's reads see the clock under test.
  let reads = 0;
  const answer = await fx.invoke(signedDelivery(ROUTE, key), () => (reads++ === 0 ? 30_000 : store.leftMs));
  const out = await documentClient(ddb).send(new GetCommand({ TableName: fx.tableName, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }));
  return { answer, record: out.Item, queued: await fx.messagesInQueue() };
}

const deliverWith = (timeLeftMs: number) => deliver({ timeLeftMs });
const deliverPausedBeforeMark = (pauseMs: number) => deliver({ pauseMs });

describe('markAnswered and the time left in the invocation', () => {
  it('is not made with less than the reserve left: the delivery is answered and queued, unmarked (seed 1683)', async () => {
    // Act: the invocation has less than MARK_ANSWERED_RESERVE_MS left when it would mark.
    const { answer, record, queued } = await deliverWith(MARK_ANSWERED_RESERVE_MS - 100);
    // Assess: accepted and queued as ever; no answeredAt, so no copy can count as a repeat of it.
    expect(answer.statusCode).toBe(202);
    expect(queued).toBe(1);
    expect(record).toBeDefined();
    expect(record?.answeredAt).toBeUndefined();
  });

  it('is made when the reserve and the mark fit in what is left', async () => {
    // Act
    const { answer, record } = await deliverWith(MARK_ANSWERED_RESERVE_MS + MARK_ANSWERED_MAX_MS + 5_000);
    // Assess: the mark stands, as the circuit breaker needs it.
    expect(answer.statusCode).toBe(202);
    expect(typeof record?.answeredAt).toBe('number');
  });

  it('is not made when the function paused longer than MARK_ANSWERED_MAX_MS between its stamp and its request (seed 860)', async () => {
    // Act: 100 ms past the mark's whole budget goes by after the stamp, before the request.
    const { answer, record, queued } = await deliverPausedBeforeMark(MARK_ANSWERED_MAX_MS + 100);
    // Assess: accepted and queued, unmarked: the stamp would be older than the answer allows.
    expect(answer.statusCode).toBe(202);
    expect(queued).toBe(1);
    expect(record).toBeDefined();
    expect(record?.answeredAt).toBeUndefined();
  });

  it('is made after a pause shorter than MARK_ANSWERED_MAX_MS, with the stamp read before it', async () => {
    // Act: a fifth of the budget goes by before the request.
    const { answer, record } = await deliverPausedBeforeMark(MARK_ANSWERED_MAX_MS / 5);
    // Assess
    expect(answer.statusCode).toBe(202);
    expect(typeof record?.answeredAt).toBe('number');
  });
});
