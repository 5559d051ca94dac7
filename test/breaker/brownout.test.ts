/**
 * Defect 9 of issue 21: our own failures must never count as a sender's repeats. During a
 * DynamoDB and SQS brownout (writes that commit and lose their answer, errors before the
 * commit and throttles, all retried by the SDK's real retry policy; sends that fail; functions
 * that die after their claim, before or after their later writes), a sender that retries every
 * 5xx until it gets a 2xx, and loses no acknowledgement, must never pause its route: none of
 * its deliveries came after an answer below 500. The same brownout with acknowledgements lost
 * still pauses it: the breaker is blind to nothing real.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { EventRecord, Payload, StoredAnswer, WorkMessage } from '../../lambdas/domain/event-record.ts';
import type { ClaimResult, ResendRequest } from '../../lambdas/ports/event-store.ts';
import type { PauseRequest, RouteStateStore } from '../../lambdas/ports/route-state-store.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { fromRecordItem } from '../../lambdas/store/record-item.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';
import { ambiguousDynamoDb } from '../support/ambiguous-dynamodb.ts';
import type { AttemptOutcome } from '../support/ambiguous-dynamodb.ts';
import { noticeLog } from '../support/breaker-notices.ts';
import { ingestFixture, SCHEME_ROUTES, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

const ROUTE = 'stripe';
const KEYS = 12;
/** The most deliveries a sender makes of one key before the test gives up on it. */
const MAX_TRIES = 100;

/** A small seeded generator (mulberry32): the same brownout on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Death extends Error {
  override readonly name = 'FunctionDied';
}

/** Counts of what the brownout did, so the test shows it really happened. */
interface Faults {
  ambiguous: number;
  beforeCommit: number;
  throttles: number;
  sendFailures: number;
  deaths: number;
}

async function brownout(seed: number) {
  // One stream per kind of fault, so one kind's draws do not shape another's.
  const rand = random(seed);
  const deathRand = random(seed + 1);
  const sqsRand = random(seed + 2);
  const senderRand = random(seed + 3);
  const faults: Faults = { ambiguous: 0, beforeCommit: 0, throttles: 0, sendFailures: 0, deaths: 0 };
  const plain = localDynamoClient(inject('dynamoEndpoint'));
  const table = await createEventsTable(plain, `events-bo-${randomUUID().slice(0, 8)}`);
  const faulty = localDynamoClient(inject('dynamoEndpoint'));
  ambiguousDynamoDb(faulty, (): AttemptOutcome => {
    const r = rand();
    if (r < 0.15) return (faults.ambiguous++, 'commit-then-error');
    if (r < 0.3) return (faults.beforeCommit++, 'error-before-commit');
    if (r < 0.4) return (faults.throttles++, 'throttle');
    return 'ok';
  });
  const die = (p: number): void => {
    if (deathRand() < p) {
      faults.deaths++;
      throw new Death('the function died here');
    }
  };
  /** The ingest's store, whose function may die after any of its writes, or before its later ones. */
  class DyingStore extends DynamoDbEventStore {
    override async claimKey(record: EventRecord, nowMs: number): Promise<ClaimResult> {
      const out = await super.claimKey(record, nowMs);
      die(0.3);
      return out;
    }
    override async keepPayload(route: string, key: string, receivedAt: number, payload: Payload): Promise<void> {
      die(0.1);
      await super.keepPayload(route, key, receivedAt, payload);
      die(0.1);
    }
    override async claimResend(route: string, key: string, request: ResendRequest): Promise<boolean> {
      die(0.1);
      const won = await super.claimResend(route, key, request);
      die(0.1);
      return won;
    }
    override async recordEnqueueFailure(route: string, key: string, receivedAt: number, answer: StoredAnswer, payload: Payload, counting?: boolean): Promise<void> {
      die(0.1);
      await super.recordEnqueueFailure(route, key, receivedAt, answer, payload, counting);
    }
    override async markAnswered(route: string, key: string, receivedAt: number, nowMs: number, budgetMs?: () => number): Promise<void> {
      // A death before the mark: no answer was given. (One after it is an answer that could have been given.)
      die(0.1);
      await super.markAnswered(route, key, receivedAt, nowMs, budgetMs);
    }
  }
  const states = new DynamoDbRouteStateStore(faulty, table);
  const routeState: RouteStateStore = {
    get: (route) => states.get(route),
    resume: (route, at) => states.resume(route, at),
    pause: async (route: string, request: PauseRequest) => {
      die(0.2);
      return states.pause(route, request);
    },
  };
  const log = noticeLog();
  const clock = { now: Date.now() };
  // Its workers take each message's lease on the same table and clock: the lease of a new
  // delivery's message starts the breaker's count.
  const plainFx = await ingestFixture({ tableName: table, now: () => clock.now });
  const sqs = new SqsWorkQueue(plainFx.sqs, plainFx.queueUrl);
  const queue: WorkQueue = {
    send: async (message: WorkMessage) => {
      const r = sqsRand();
      if (r < 0.4) {
        faults.sendFailures++;
        throw new Error('SQS: 503 Service Unavailable');
      }
      // A death before the send: no answer was given. (One after it is an answer that could have
      // been given: the lease of its message starts the count, architecture.md#circuit-breaker.)
      die(0.1);
      await sqs.send(message);
    },
  };
  // A sensitive route: the breaker's least threshold.
  const routes = SCHEME_ROUTES.map((r) => (r.name === ROUTE ? { ...r, breakerThreshold: 2 } : r));
  const fx = await ingestFixture({
    routes,
    tableName: table,
    store: new DyingStore(faulty, table),
    queue,
    breaker: { routeState },
    logger: log.logger,
    now: () => clock.now,
    resendAfterMs: 60_000,
  });
  const repeatsOf = async (key: string): Promise<number | undefined> => {
    const out = await documentClient(plain).send(
      new GetCommand({ TableName: table, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }),
    );
    return out.Item === undefined ? undefined : fromRecordItem(out.Item).repeats;
  };

  /**
   * One sender and key: deliveries until `acks` answers below 500 reached it (each lost one makes
   * it deliver again, as a lost acknowledgement does). Returns the statuses it saw.
   */
  let leases = 0;
  const send = async (key: string, acks: number): Promise<number[]> => {
    const statuses: number[] = [];
    let received = 0;
    while (received < acks && statuses.length < MAX_TRIES) {
      clock.now += 5_000 + Math.floor(senderRand() * 40_000);
      const answer = await fx.invoke(signedDelivery(ROUTE, key, { nowSeconds: Math.floor(clock.now / 1000) }));
      leases += await plainFx.takeWork();
      const status = answer.statusCode ?? 0;
      statuses.push(status);
      if (status < 500) received++;
    }
    return statuses;
  };
  // The test reads the route's state past the brownout.
  return { faults, states: new DynamoDbRouteStateStore(plain, table), log, send, repeatsOf, leases: () => leases };
}

describe('the circuit breaker during a DynamoDB and SQS brownout', () => {
  it('never pauses a route for the retries our own failures caused', async () => {
    // Prepare
    const b = await brownout(21);
    const keys = Array.from({ length: KEYS }, () => uniqueKey(ROUTE));
    // Act: each sender retries every 5xx until it gets its 2xx, and loses no acknowledgement.
    const answers = new Map<string, number[]>();
    for (const key of keys) answers.set(key, await b.send(key, 1));
    // Assess: the brownout was real, every sender got through in the end, and no delivery counted.
    const all = [...answers.values()].flat();
    expect(all.filter((s) => s >= 500).length).toBeGreaterThan(KEYS);
    expect(b.faults).toMatchObject({
      ambiguous: expect.any(Number) as number,
      deaths: expect.any(Number) as number,
    });
    expect(Math.min(b.faults.ambiguous, b.faults.beforeCommit, b.faults.throttles, b.faults.sendFailures, b.faults.deaths)).toBeGreaterThan(0);
    // Workers took the work as it came: their leases started counts that our failures never fed.
    expect(b.leases()).toBeGreaterThan(KEYS / 2);
    for (const [key, statuses] of answers) expect(statuses.at(-1), key).toBeLessThan(500);
    expect((await b.states.get(ROUTE)).state).toBe('active');
    expect(b.log.notices()).toHaveLength(0);
    for (const key of keys) expect([0, undefined]).toContain(await b.repeatsOf(key));
  });

  it('still pauses it when a sender repeats after our 2xx answers, in the same brownout', async () => {
    // Prepare
    const b = await brownout(21);
    const key = uniqueKey(ROUTE);
    // Act: nine acknowledgements lost, so the sender delivers until it has seen ten answers below 500.
    const statuses = await b.send(key, 10);
    // Assess: the repeats after real answers reached the threshold of 2 (a trip whose pause write
    // died is tried again threshold + 1 repeats later).
    expect(statuses.filter((s) => s < 500)).toHaveLength(10);
    expect(b.leases()).toBeGreaterThan(0);
    expect((await b.states.get(ROUTE)).state).toBe('paused');
    expect(await b.repeatsOf(key)).toBeGreaterThanOrEqual(2);
  });
});
