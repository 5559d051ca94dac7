/**
 * What the executor trusts, and from when: the body in a message only when it hashes to the
 * record's fingerprint (defect 14), and its action's time only from the instant before the
 * lease write was sent (defect 11).
 */
import { describe, expect, it, vi } from 'vitest';
import type { Action, ActionContext } from '../../lambdas/actions/action.ts';
import { leaseMarginSeconds } from '../../lambdas/config/route-config.ts';
import type { ExecutionStore } from '../../lambdas/ports/execution-store.ts';
import { executorHarness, withLease } from './executor-harness.ts';

/** An action that keeps what it was handed on each run. */
function watched(): { action: Action; seen: ActionContext[] } {
  const seen: ActionContext[] = [];
  return {
    seen,
    action: (ctx) => {
      seen.push(ctx);
      return Promise.resolve({ ok: true });
    },
  };
}

describe('the executor and the body a message carries', () => {
  it('runs nothing for a body that is not the one the record was accepted with, sends it to people with why, and runs the genuine one', async () => {
    // Prepare: a delivery, and a forged message for its record (same route, key, generation and
    // fingerprint field), as anyone allowed to send to the work queue could make.
    const work = watched();
    const h = await executorHarness({ action: work.action });
    const { key, message } = await h.deliver({ amount: 100 });
    const forged = { ...message, body: JSON.stringify({ amount: 1_000_000 }) };
    // Act
    const report = await h.run(forged);
    const after = await h.record(key);
    const genuine = await h.run(message);
    // Assess: the forgery took no lease, spent no attempt, kept nothing, and reached people.
    expect(report).toMatchObject({ outcome: 'forged-body', ack: true });
    expect(report.deadLetterReason).toMatch(/does not match the delivery's fingerprint/);
    expect(after).toMatchObject({ status: 'RECEIVED', attempts: 0, runs: 0 });
    expect(after?.body).toBeUndefined();
    expect(h.sent).toHaveLength(1);
    expect(h.sent[0]).toMatchObject({ key, body: forged.body, reason: report.deadLetterReason });
    expect(genuine).toMatchObject({ outcome: 'completed', ack: true });
    expect(work.seen.map((ctx) => ctx.body)).toEqual([{ amount: 100 }]);
  });

  it('never runs a forged body that comes back as a redriven dead-letter copy either', async () => {
    const work = watched();
    const h = await executorHarness({ action: work.action });
    const { key, message } = await h.deliver({ amount: 7 });
    await h.run({ ...message, body: '{"amount":7000}' });
    const copy = h.sent[0]!;
    h.advance(60_000);
    // A person redrives the DLQ: the forged copy comes back, stamped now.
    const report = await h.run(copy, { sentAt: h.now() });
    expect(report).toMatchObject({ outcome: 'to-dead-letter-queue', ack: false, visibilitySeconds: 0 });
    expect(work.seen).toEqual([]);
    expect(await h.record(key)).toMatchObject({ status: 'RECEIVED', attempts: 0 });
  });
});

describe('the action\'s deadline', () => {
  it('counts from the instant before the lease write was sent: SDK retries of that write shorten the action, never push it past the lease', async () => {
    // Prepare: the lease write takes 4 s (the SDK retried it) before it returns.
    const work = watched();
    let leaseSentAt = 0;
    const slowLease = (store: ExecutionStore): ExecutionStore =>
      withLease(store, async (request, inner) => {
        leaseSentAt = request.nowMs;
        const lease = await inner(request);
        h.advance(4_000);
        return lease;
      });
    const h = await executorHarness({ action: work.action, store: slowLease });
    const { key, message } = await h.deliver({ amount: 1 });
    const route = h.deps.routes.get('standard-webhooks')!;
    // Act
    const report = await h.run(message);
    const record = await h.record(key);
    // Assess: the deadline is the lease's start plus the action deadline, a margin before the lease ends.
    expect(report.outcome).toBe('completed');
    const deadline = work.seen[0]!.deadline;
    expect(deadline).toBe(leaseSentAt + route.actionDeadlineSeconds * 1000);
    expect(Number(record?.claimedAt)).toBe(leaseSentAt);
    expect(deadline).toBe(leaseSentAt + route.leaseSeconds * 1000 - leaseMarginSeconds(route.leaseSeconds) * 1000);
  });

  it('runs nothing, and hands the message back, when the lease write took the whole deadline', async () => {
    const work = watched();
    const slowLease = (store: ExecutionStore): ExecutionStore =>
      withLease(store, async (request, inner) => {
        const lease = await inner(request);
        h.advance(60_000);
        return lease;
      });
    const h = await executorHarness({ action: work.action, store: slowLease });
    const { key, message } = await h.deliver({ amount: 2 });
    const report = await h.run(message);
    expect(report).toMatchObject({ outcome: 'retryable-error', ack: false });
    expect(report.error).toMatch(/^LeaseTooSlowError: /);
    expect(work.seen).toEqual([]);
    expect(await h.record(key)).toMatchObject({ status: 'RECEIVED', attempts: 1 });
  });

  /** The store with its replay-memory write answered `lateMs` late, on the harness's clock. */
  const slowMemory =
    (lateMs: number, advance: (ms: number) => void) =>
    (store: ExecutionStore): ExecutionStore =>
      new Proxy(store, {
        get(target, prop) {
          const value: unknown = Reflect.get(target, prop);
          if (typeof value !== 'function') return value;
          const method = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
          if (prop !== 'rememberTaken') return method;
          return async (...args: unknown[]) => {
            await method(...args);
            advance(lateMs);
          };
        },
      });

  it('gives the action a signal that fires at its deadline, less the time the replay memory\'s write took', async () => {
    // Prepare: a scheme that signs no timestamp; its replay-memory write answers 4 s late.
    const work = watched();
    const timeouts = vi.spyOn(AbortSignal, 'timeout');
    const h = await executorHarness({ action: work.action, store: slowMemory(4_000, (ms) => {
      h.advance(ms);
    }), route: 'github' });
    const { message } = await h.deliver({ amount: 4 });
    try {
      // Act
      const report = await h.run(message);
      // Assess: the signal's time is what is left of the deadline when the action is called.
      expect(report.outcome).toBe('completed');
      expect(timeouts).toHaveBeenLastCalledWith(work.seen[0]!.deadline - h.now());
    } finally {
      timeouts.mockRestore();
    }
  });

  it('runs nothing, and hands the message back, when the replay memory\'s write answered after the deadline', async () => {
    // Prepare: a scheme that signs no timestamp, whose run first records that its body's work
    // is taken; that write's answer comes 60 s late (the SDK sets no timeout of its own).
    const work = watched();
    const h = await executorHarness({ action: work.action, store: slowMemory(60_000, (ms) => {
      h.advance(ms);
    }), route: 'github' });
    const { key, message } = await h.deliver({ amount: 3 });
    // Act
    const report = await h.run(message);
    // Assess: the action was never called, and the record waits for its next run.
    expect(report).toMatchObject({ outcome: 'retryable-error', ack: false });
    expect(report.error).toMatch(/^LeaseTooSlowError: the lease and replay-memory writes took longer/);
    expect(work.seen).toEqual([]);
    expect(await h.record(key)).toMatchObject({ status: 'RECEIVED', attempts: 1 });
  });
});
