import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Action } from '../../lambdas/actions/action.ts';
import { executeMessage } from '../../lambdas/executor/execute-message.ts';
import type { ResolvedRateLimit } from '../../lambdas/config/resolve-config.ts';
import { DynamoDbRateGate } from '../../lambdas/store/dynamodb-rate-gate.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { ambiguousDynamoDb, once } from '../support/ambiguous-dynamodb.ts';
import { executorHarness, updating } from './executor-harness.ts';

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
  it('admits one run per interval and spreads the refused ones over the following intervals', async () => {
    // Prepare
    const gate = new DynamoDbRateGate(localDynamoClient(inject('dynamoEndpoint')), inject('eventsTable'));
    const route = `gate-${randomUUID().slice(0, 8)}`;
    const t0 = 1_800_000_000_000;
    // Act
    const first = await gate.admit(route, PER_SECOND, t0);
    const refused = [await gate.admit(route, PER_SECOND, t0 + 100), await gate.admit(route, PER_SECOND, t0 + 200), await gate.admit(route, PER_SECOND, t0 + 300)];
    const early = await gate.admit(route, PER_SECOND, t0 + 499);
    const onTime = await gate.admit(route, PER_SECOND, t0 + 500);
    // Assess: admissions are an interval apart; the refused come back one interval after another.
    expect(first).toEqual({ admitted: true });
    expect(refused).toEqual([
      { admitted: false, retryAtMs: t0 + 500 },
      { admitted: false, retryAtMs: t0 + 1000 },
      { admitted: false, retryAtMs: t0 + 1500 },
    ]);
    expect(early).toEqual({ admitted: false, retryAtMs: t0 + 2000 });
    expect(onTime).toEqual({ admitted: true });
  });

  it("takes the SDK's retry of an admission that committed and lost its answer for its own admission", async () => {
    // Prepare
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const lost = once('UpdateItemCommand', 'commit-then-error', updating('nextAt = :next'));
    const heal = ambiguousDynamoDb(client, lost);
    const gate = new DynamoDbRateGate(client, inject('eventsTable'));
    const route = `gate-${randomUUID().slice(0, 8)}`;
    // Act
    const decision = await gate.admit(route, PER_SECOND, 1_800_000_000_000);
    heal();
    // Assess
    expect(lost.fired()).toBe(true);
    expect(decision).toEqual({ admitted: true });
  });

  it('sends work whose turn is past the longest SQS delay back after 900 s without reserving a slot', async () => {
    const gate = new DynamoDbRateGate(localDynamoClient(inject('dynamoEndpoint')), inject('eventsTable'));
    const route = `gate-${randomUUID().slice(0, 8)}`;
    const hourly: ResolvedRateLimit = { count: 1, perSeconds: 3600, intervalMs: 3_600_000, text: '1 per hour' };
    const t0 = 1_800_000_000_000;
    expect(await gate.admit(route, hourly, t0)).toEqual({ admitted: true });
    expect(await gate.admit(route, hourly, t0 + 1000)).toEqual({ admitted: false, retryAtMs: t0 + 1000 + 900_000 });
    expect(await gate.admit(route, hourly, t0 + 3_600_000)).toEqual({ admitted: true });
  });
});

describe('the executor on a rate-limited route', () => {
  it('runs one message per interval and defers the rest with a delayed wake-up: RECEIVED, no attempt spent, acknowledged', async () => {
    // Prepare: three deliveries at once on a route limited to 2 a second.
    let clock = 0;
    const work = noted(() => clock);
    const h = await executorHarness({ action: work.action, rateLimit: { perSecond: 2 } });
    clock = h.now();
    const deliveries = [await h.deliver({ amount: 1 }), await h.deliver({ amount: 2 }), await h.deliver({ amount: 3 })];
    // Act: all three arrive in the same instant.
    const reports = [];
    for (const d of deliveries) reports.push(await h.run(d.message));
    // Assess: one ran; two wait, acknowledged (never handed back), their wake-ups delayed in turn.
    expect(reports.map((r) => r.outcome)).toEqual(['completed', 'rate-limited', 'rate-limited']);
    expect(reports.every((r) => r.ack)).toBe(true);
    expect(h.sent.map((m) => m.key)).toEqual([deliveries[1]?.key, deliveries[2]?.key]);
    expect(h.sentOptions.map((o) => o.delaySeconds)).toEqual([1, 1]);
    const waiting = await h.record(deliveries[1]!.key);
    expect(waiting).toMatchObject({ status: 'RECEIVED', attempts: 0, deferrals: 1 });
    expect(Number(waiting?.lastEnqueuedAt)).toBe(h.now() + 1000);
    // Act: the wake-ups come back an interval apart, and run.
    h.advance(500);
    clock = h.now();
    const second = await h.run(h.sent[0]!);
    h.advance(500);
    clock = h.now();
    const third = await h.run(h.sent[1]!);
    // Assess
    expect([second.outcome, third.outcome]).toEqual(['completed', 'completed']);
    expect(work.starts).toHaveLength(3);
    for (let i = 1; i < work.starts.length; i++) expect(work.starts[i]! - work.starts[i - 1]!).toBeGreaterThanOrEqual(500);
    for (const d of deliveries) expect(await h.record(d.key)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
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
