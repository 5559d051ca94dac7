/**
 * Leases per destination on DynamoDB Local: a route whose action time depends on the payout's
 * destination leases each record for its own time, keeps that lease on the record, and aborts
 * the action by it; a copy that finds the lease held comes back when that record's lease ends.
 */
import { describe, expect, it } from 'vitest';
import type { Action, ActionContext } from '../../lambdas/actions/action.ts';
import type { ActionTimeTable } from '../../lambdas/config/route-config.ts';
import { leaseMarginSeconds } from '../../lambdas/config/route-config.ts';
import type { ExecutionReport } from '../../lambdas/executor/execute-message.ts';
import { TAKEOVER_MARGIN_MS } from '../../lambdas/store/record-transitions.ts';
import { executorHarness } from './executor-harness.ts';
import type { ExecutorHarness } from './executor-harness.ts';

const BY_DESTINATION: ActionTimeTable = { field: 'destination', seconds: { EU: 10, APAC: 30, LATAM: 45 }, otherwise: 15 };

/** What the action saw while it ran: its context, its record as stored then, and a second copy's fate. */
interface Seen {
  readonly ctx: ActionContext;
  readonly record: Record<string, unknown> | undefined;
  readonly copy: ExecutionReport;
}

/**
 * An action that, on its first run for a key, reads its record (the lease is live) and has a
 * second copy of its message received meanwhile, as SQS may hand one message to two workers.
 */
function watching(h: () => ExecutorHarness, messages: Map<string, Parameters<ExecutorHarness['run']>[0]>, seen: Map<string, Seen>): Action {
  return async (ctx) => {
    if (!seen.has(ctx.key)) {
      const record = await h().record(ctx.key);
      const copy = await h().run(messages.get(ctx.key)!);
      seen.set(ctx.key, { ctx, record, copy });
    }
    return { ok: true };
  };
}

describe('the executor on a route with an action time per destination', () => {
  it('leases an EU payout for 30 s and a LATAM payout for 135 s, keeps each lease on its record, and aborts each action by its own', async () => {
    // Prepare
    const messages = new Map<string, Parameters<ExecutorHarness['run']>[0]>();
    const seen = new Map<string, Seen>();
    const h: ExecutorHarness = await executorHarness({ action: watching(() => h, messages, seen), actionTime: BY_DESTINATION });
    const route = h.deps.routes.get('standard-webhooks')!;
    const eu = await h.deliver({ amount: 100, currency: 'EUR', destination: 'EU' });
    const latam = await h.deliver({ amount: 100, currency: 'BRL', destination: 'LATAM' });
    messages.set(eu.key, eu.message);
    messages.set(latam.key, latam.message);
    // Act
    const reports = [await h.run(eu.message), await h.run(latam.message)];
    // Assess: both completed, each under its own lease.
    expect(reports.map((r) => r.outcome)).toEqual(['completed', 'completed']);
    expect(route.leaseSeconds).toBe(135);
    for (const [key, leaseSeconds] of [[eu.key, 30], [latam.key, 135]] as const) {
      const { ctx, record, copy } = seen.get(key)!;
      const claimedAt = Number(record?.claimedAt);
      // The lease as written by the claim: its end the claim instant plus this record's lease.
      expect(record).toMatchObject({ status: 'EXECUTING', leaseSeconds });
      expect(Number(record?.leaseUntil) - claimedAt).toBe(leaseSeconds * 1000);
      // The action's deadline, from which its abort signal is timed: a margin before its own lease.
      expect(ctx.deadline - claimedAt).toBe((leaseSeconds - leaseMarginSeconds(leaseSeconds)) * 1000);
      // A copy that found the lease held comes back when this record's lease is over, not the route's longest.
      expect(copy).toMatchObject({ outcome: 'locked', ack: false, visibilitySeconds: leaseSeconds + TAKEOVER_MARGIN_MS / 1000 });
    }
    // The record keeps the lease it was given after the lease itself is gone.
    expect(await h.record(eu.key)).toMatchObject({ status: 'COMPLETED', leaseSeconds: 30 });
    expect((await h.record(eu.key))?.leaseUntil).toBeUndefined();
    expect(await h.record(latam.key)).toMatchObject({ status: 'COMPLETED', leaseSeconds: 135 });
  });

  it('leases a payout whose destination the table does not name for otherwise, and takes over an EU lease once it is over while a LATAM one still holds', async () => {
    // Prepare: two workers that die holding their leases (their actions never answer in time:
    // the test moves the clock instead of waiting).
    const h = await executorHarness({ action: () => Promise.resolve({ ok: true }), actionTime: BY_DESTINATION });
    const na = await h.deliver({ amount: 5, destination: 'NA' });
    const eu = await h.deliver({ amount: 5, destination: 'EU' });
    const latam = await h.deliver({ amount: 5, destination: 'LATAM' });
    const store = h.deps.store;
    const claimedAt = h.now();
    for (const { key, message } of [eu, latam]) {
      const leaseMs = key === eu.key ? 30_000 : 135_000;
      const lease = await store.acquireLease({ route: message.route, key, receivedAt: message.receivedAt, nowMs: claimedAt, leaseMs, token: `dead-${key}`, maxAttempts: 3 });
      expect(lease.kind).toBe('leased');
    }
    // Act: the copies come back just after the EU lease is over by the takeover's margin.
    h.advance(30_000 + TAKEOVER_MARGIN_MS);
    const [naReport, euReport, latamReport] = [await h.run(na.message), await h.run(eu.message), await h.run(latam.message)];
    // Assess
    expect(naReport.outcome).toBe('completed');
    expect(await h.record(na.key)).toMatchObject({ leaseSeconds: 45 });
    expect(euReport.outcome).toBe('completed');
    expect(await h.record(eu.key)).toMatchObject({ status: 'COMPLETED', leaseSeconds: 30, attempts: 2 });
    expect(latamReport).toMatchObject({ outcome: 'locked', ack: false, visibilitySeconds: 135 - 30 });
    expect(await h.record(latam.key)).toMatchObject({ status: 'EXECUTING', leaseSeconds: 135, leaseToken: `dead-${latam.key}` });
  });
});
