import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Action } from '../../lambdas/actions/action.ts';
import { executeMessage } from '../../lambdas/executor/execute-message.ts';
import type { ResolvedRateLimit } from '../../lambdas/config/resolve-config.ts';
import { DynamoDbRateGate } from '../../lambdas/store/dynamodb-rate-gate.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { ambiguousDynamoDb, once } from '../support/ambiguous-dynamodb.ts';
import { executorHarness, updating, withLease } from './executor-harness.ts';

const PER_SECOND: ResolvedRateLimit = { count: 2, perSeconds: 1, intervalMs: 500, text: '2 per second' };

/** An action that notes the executor's clock at each run. */
function noted(now: () => number): { action: Action; starts: number[] } {
  const starts: number[] = [];
  return {
    starts,
    action: () => {
      starts.push(now());
      return Promise.resolve({ ok: true });
    },
  };
}

describe('the rate gate (DynamoDbRateGate on DynamoDB Local)', () => {
  const WINDOW = { leadMs: 100, maxWaitMs: 2000 };
  // 2 a second: slots 500 ms + 50 / 2 ms of start tolerance apart.
  const STEP = 525;

  it('gives start slots a step apart within the caller\'s window, and spreads the refused ones over the following steps', async () => {
    // Prepare
    const gate = new DynamoDbRateGate(localDynamoClient(inject('dynamoEndpoint')), inject('eventsTable'));
    const route = `gate-${randomUUID().slice(0, 8)}`;
    const t0 = 1_800_000_000_000;
    // Act: six runs ask within 50 ms; the window reaches 2 s ahead.
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await gate.admit(route, PER_SECOND, t0 + 10 * i, WINDOW));
    // Assess: the first at its lead, three more a step apart each, the last two refused in turn.
    expect(decisions).toEqual([
      { admitted: true, startAtMs: t0 + 100 },
      { admitted: true, startAtMs: t0 + 100 + STEP },
      { admitted: true, startAtMs: t0 + 100 + 2 * STEP },
      { admitted: true, startAtMs: t0 + 100 + 3 * STEP },
      { admitted: false, retryAtMs: t0 + 100 + 4 * STEP },
      { admitted: false, retryAtMs: t0 + 100 + 5 * STEP },
    ]);
  });

  it('with no room to wait, admits only a run whose slot is now, as plain GCRA', async () => {
    const gate = new DynamoDbRateGate(localDynamoClient(inject('dynamoEndpoint')), inject('eventsTable'));
    const route = `gate-${randomUUID().slice(0, 8)}`;
    const t0 = 1_800_000_000_000;
    const none = { leadMs: 0, maxWaitMs: 0 };
    expect(await gate.admit(route, PER_SECOND, t0, none)).toEqual({ admitted: true, startAtMs: t0 });
    expect(await gate.admit(route, PER_SECOND, t0 + STEP - 1, none)).toEqual({ admitted: false, retryAtMs: t0 + STEP });
    expect(await gate.admit(route, PER_SECOND, t0 + STEP, none)).toEqual({ admitted: true, startAtMs: t0 + STEP });
  });

  it("takes the SDK's retry of an admission that committed and lost its answer for its own admission", async () => {
    // Prepare
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const lost = once('UpdateItemCommand', 'commit-then-error', updating('nextAt = :next'));
    const heal = ambiguousDynamoDb(client, lost);
    const gate = new DynamoDbRateGate(client, inject('eventsTable'));
    const route = `gate-${randomUUID().slice(0, 8)}`;
    // Act
    const decision = await gate.admit(route, PER_SECOND, 1_800_000_000_000, WINDOW);
    heal();
    // Assess
    expect(lost.fired()).toBe(true);
    expect(decision).toEqual({ admitted: true, startAtMs: 1_800_000_000_100 });
  });

  it('sends work whose turn is past the longest SQS delay back after 900 s without reserving a slot', async () => {
    const gate = new DynamoDbRateGate(localDynamoClient(inject('dynamoEndpoint')), inject('eventsTable'));
    const route = `gate-${randomUUID().slice(0, 8)}`;
    const hourly: ResolvedRateLimit = { count: 1, perSeconds: 3600, intervalMs: 3_600_000, text: '1 per hour' };
    const t0 = 1_800_000_000_000;
    expect(await gate.admit(route, hourly, t0, WINDOW)).toEqual({ admitted: true, startAtMs: t0 + 100 });
    expect(await gate.admit(route, hourly, t0 + 1000, WINDOW)).toEqual({ admitted: false, retryAtMs: t0 + 1000 + 900_000 });
    // The next slot: an hour and the start tolerance after the first.
    expect(await gate.admit(route, hourly, t0 + 3_600_000, WINDOW)).toEqual({ admitted: true, startAtMs: t0 + 100 + 3_600_050 });
  });
});

describe('the executor on a rate-limited route', () => {
  it('starts each run at its slot: three at once on a route limited to 2 a second start a step apart, each waiting in its invocation', async () => {
    // Prepare: three deliveries at once on a route limited to 2 a second.
    // The action notes the harness's clock (read when it runs, once the harness exists).
    const work = noted(() => h.now());
    const h = await executorHarness({ action: work.action, rateLimit: { perSecond: 2 } });
    const t0 = h.now();
    const deliveries = [await h.deliver({ amount: 1 }), await h.deliver({ amount: 2 }), await h.deliver({ amount: 3 })];
    // Act: all three are received in the same instant.
    const reports = [];
    for (const d of deliveries) reports.push(await h.run(d.message));
    // Assess: all ran, none waited in the queue; the starts are the slots, a step (interval + 25 ms) apart.
    expect(reports.map((r) => r.outcome)).toEqual(['completed', 'completed', 'completed']);
    expect(h.sent).toEqual([]);
    expect(work.starts).toEqual([t0 + 200, t0 + 725, t0 + 1250]);
    for (const d of deliveries) expect(await h.record(d.key)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
  });

  it('defers a run whose slot is further than it may wait with a delayed wake-up: RECEIVED, no attempt spent, acknowledged', async () => {
    const work = noted(() => 0);
    const h = await executorHarness({ action: work.action, rateLimit: { perMinute: 1 } });
    const first = await h.deliver({ amount: 1 });
    const second = await h.deliver({ amount: 2 });
    expect((await h.run(first.message)).outcome).toBe('completed');
    const asked = h.now();
    const report = await h.run(second.message);
    // Assess: the next slot is a step (60,050 ms) after the first, which started when the second asked.
    expect(report).toMatchObject({ outcome: 'rate-limited', ack: true });
    expect(h.sent.map((m) => m.key)).toEqual([second.key]);
    const delaySeconds = 61;
    expect(h.sentOptions.map((o) => o.delaySeconds)).toEqual([delaySeconds]);
    const waiting = await h.record(second.key);
    expect(waiting).toMatchObject({ status: 'RECEIVED', attempts: 0, deferrals: 1 });
    expect(Number(waiting?.lastEnqueuedAt)).toBe(asked + delaySeconds * 1000);
    expect(work.starts).toHaveLength(1);
  });

  it('gives its slot up when the lease write answers past it: nothing runs, the attempt is handed back, a wake-up comes in a second', async () => {
    // Prepare: the lease write takes 400 ms, past the 200 ms lead and its 50 ms tolerance.
    let slow = true;
    const work = noted(() => h.now());
    const h = await executorHarness({
      action: work.action,
      rateLimit: { perSecond: 1 },
      store: (store) =>
        withLease(store, async (request, inner) => {
          const out = await inner(request);
          if (slow) h.advance(400);
          return out;
        }),
    });
    const { key, message } = await h.deliver({ amount: 9 });
    // Act
    const missed = await h.run(message);
    // Assess
    expect(missed).toMatchObject({ outcome: 'rate-limited', ack: true });
    expect(work.starts).toEqual([]);
    expect(h.sent.map((m) => m.key)).toEqual([key]);
    expect(h.sentOptions.map((o) => o.delaySeconds)).toEqual([1]);
    const waiting = await h.record(key);
    expect(waiting).toMatchObject({ status: 'RECEIVED', attempts: 0, runs: 1, deferrals: 1 });
    expect(waiting?.leaseToken).toBeUndefined();
    expect(Number(waiting?.lastEnqueuedAt)).toBe(h.now() + 1000);
    // Act: its wake-up comes back a second later, and the lease is quick this time.
    slow = false;
    h.advance(1000);
    const ran = await h.run(h.sent[0]!);
    // Assess: it runs on its first attempt; its run number counts the lease it gave up.
    expect(ran).toMatchObject({ outcome: 'completed', attempt: 2 });
    expect(work.starts).toHaveLength(1);
    expect(await h.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1, runs: 2 });
  });

  it('acknowledges a waiting message whose record completed meanwhile, and sends nothing', async () => {
    const work = noted(() => 0);
    const h = await executorHarness({ action: work.action, rateLimit: { perMinute: 1 } });
    const { key, message } = await h.deliver({ amount: 5 });
    expect((await h.run(message)).outcome).toBe('completed');
    // A duplicate message of the same work, within the minute.
    const again = await h.run(message);
    expect(again).toMatchObject({ outcome: 'duplicate', ack: true });
    expect(h.sent).toEqual([]);
    expect(work.starts).toHaveLength(1);
    expect(await h.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
  });

  it('keeps the message when the delayed send fails: it goes back to SQS, and the record still waits RECEIVED', async () => {
    const work = noted(() => 0);
    const h = await executorHarness({ action: work.action, rateLimit: { perMinute: 1 } });
    const first = await h.deliver({ amount: 6 });
    const second = await h.deliver({ amount: 7 });
    expect((await h.run(first.message)).outcome).toBe('completed');
    const failing = { ...h.deps, workQueue: { send: () => Promise.reject(new Error('SQS is down')) } };
    await expect(executeMessage(failing, { messageId: 'm', body: JSON.stringify(second.message), receiveCount: 1, sentAt: h.now() })).rejects.toThrow(
      'SQS is down',
    );
    expect(await h.record(second.key)).toMatchObject({ status: 'RECEIVED', attempts: 0 });
    expect(work.starts).toHaveLength(1);
  });
});
