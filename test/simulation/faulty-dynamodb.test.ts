import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';
import { SLOW_ANSWER_MAX_MS, SLOW_ANSWER_MIN_MS, emptyDynamoFaultStats, faultyDynamoDb } from './faulty-dynamodb.ts';
import type { DynamoFaultStats } from './faulty-dynamodb.ts';
import { Scheduler } from './scheduler.ts';
import { SimTimers } from './sim-timers.ts';

/**
 * The slow answer of the simulation's DynamoDB: the table acts on the attempt, and its answer
 * reaches the caller seconds of simulated time later, unless the caller's abortSignal fires
 * first (then at that instant). Real DynamoDB Local, the simulation's scheduler and timers.
 */
const START = Date.UTC(2030, 0, 1);
/** Every draw 0.5: no other fault is chosen (their chances are 0), and the delay is the middle one. */
const DELAY_MS = SLOW_ANSWER_MIN_MS + Math.floor(0.5 * (SLOW_ANSWER_MAX_MS - SLOW_ANSWER_MIN_MS));

interface World {
  readonly sched: Scheduler;
  readonly client: DynamoDBClient;
  readonly plain: DynamoDBClient;
  readonly stats: DynamoFaultStats;
  now(): number;
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function world(): World {
  let nowMs = START;
  const sched = new Scheduler({ now: () => nowMs });
  const timers = new SimTimers(
    () => nowMs,
    () => sched.current() !== undefined,
  );
  cleanups.push(timers.install());
  const stats = emptyDynamoFaultStats();
  const endpoint = inject('dynamoEndpoint');
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const plain = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  cleanups.push(() => {
    client.destroy();
    plain.destroy();
  });
  faultyDynamoDb(client, {
    sched,
    random: () => 0.5,
    plan: () => ({ ambiguous: 0, throttle: 0, beforeCommit: 0, slow: 1 }),
    advanceTo: (ms) => {
      nowMs = Math.max(nowMs, ms);
      timers.fire();
    },
    now: () => nowMs,
    nextTimerMs: () => timers.nextDueMs(),
    stats,
  });
  return { sched, client, plain, stats, now: () => nowMs };
}

const item = (pk: string) => ({ pk: { S: pk }, sk: { S: 'slow-answer' } });

async function stored(w: World, pk: string): Promise<boolean> {
  const out = await w.plain.send(new GetItemCommand({ TableName: inject('eventsTable'), Key: item(pk), ConsistentRead: true }));
  return out.Item !== undefined;
}

describe('slow DynamoDB answers in the simulation', () => {
  it('commits the write at once and answers the caller after the delay, while other actors may act', async () => {
    // Arrange
    const w = world();
    const pk = `TEST#${randomUUID()}`;
    let answered = false;
    // Act
    const actor = await w.sched.spawn('executor', 'slow put', async () => {
      await w.client.send(new PutItemCommand({ TableName: inject('eventsTable'), Item: item(pk) }));
      answered = true;
    });
    const parkedAt = actor.parkedAt;
    const committedBeforeAnswer = await stored(w, pk);
    const clockWhileWaiting = w.now();
    await w.sched.runToEnd();
    // Assess
    expect(parkedAt).toBe('dynamo.slow');
    expect(committedBeforeAnswer).toBe(true);
    expect(clockWhileWaiting).toBe(START);
    expect(answered).toBe(true);
    expect(actor.state).toBe('done');
    expect(w.now() - START).toBe(DELAY_MS);
    expect(w.stats).toMatchObject({ slowAnswers: 1, slowestAnswerMs: DELAY_MS });
  });

  it("ends the wait with an AbortError at the instant the caller's signal fires, the write committed", async () => {
    // Arrange
    const w = world();
    const pk = `TEST#${randomUUID()}`;
    const boundMs = 1_000;
    let failure: unknown;
    // Act
    const actor = await w.sched.spawn('ingest', 'bounded put', async () => {
      try {
        await w.client.send(new PutItemCommand({ TableName: inject('eventsTable'), Item: item(pk) }), { abortSignal: AbortSignal.timeout(boundMs) });
      } catch (error) {
        failure = error;
      }
    });
    await w.sched.runToEnd();
    // Assess
    expect(actor.state).toBe('done');
    expect((failure as Error | undefined)?.name).toBe('AbortError');
    expect(w.now() - START).toBe(boundMs);
    expect(await stored(w, pk)).toBe(true);
    expect(w.stats.slowestAnswerMs).toBe(boundMs);
  });

  it('tells the scheduler a waiting strand woke at its own timer, however far others moved the clock since', async () => {
    // Arrange: a bounded write parks on its slow answer.
    const w = world();
    const pk = `TEST#${randomUUID()}`;
    const boundMs = 1_000;
    const actor = await w.sched.spawn('ingest', 'bounded put', async () => {
      await w.client.send(new PutItemCommand({ TableName: inject('eventsTable'), Item: item(pk) }), { abortSignal: AbortSignal.timeout(boundMs) }).catch(() => undefined);
    });
    const beforeTheTimer = w.sched.wokenAt(actor);
    // Act: another actor's wait moves the shared clock far past the bound (its own slow answer).
    const other = await w.sched.spawn('executor', 'slow put', async () => {
      await w.client.send(new PutItemCommand({ TableName: inject('eventsTable'), Item: item(`${pk}-other`) }));
    });
    await w.sched.step(other);
    // Assess: the parked strand reports the instant its timer fired, not the clock's now.
    expect(beforeTheTimer).toBeUndefined();
    expect(w.now() - START).toBeGreaterThan(boundMs);
    expect(w.sched.wokenAt(actor)).toEqual({ at: START + boundMs, index: 0 });
  });
});
