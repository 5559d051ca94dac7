/**
 * `retryproof inspect` shows the lease each record was given: on a route with an action time
 * per destination, an EU payout's 30 s and a LATAM payout's 135 s, while the lease runs (with
 * its end) and after it (the last attempt's), in text and in --json. The records are made by
 * the real executor on DynamoDB Local; the command reads them as it reads a stack's.
 */
import { describe, expect, it } from 'vitest';
import type { Action } from '../../lambdas/actions/action.ts';
import { formatTime } from '../../cli/output.ts';
import { executorHarness } from '../executor/executor-harness.ts';
import type { ExecutorHarness } from '../executor/executor-harness.ts';
import { inspectOnTestTable } from '../support/inspect-on-test-table.ts';

const run = inspectOnTestTable();
/** Runs `retryproof inspect ROUTE key` (with --json when asked) and returns what it printed. */
const inspect = (key: string, json = false): Promise<string> => run(key, { json });

describe('retryproof inspect on a route with an action time per destination', () => {
  it("shows each record's own lease while it runs, with its end, and after it, in text and in --json", async () => {
    // Prepare: the action inspects its own record while it holds the lease.
    const during = new Map<string, { text: string; json: string }>();
    const action: Action = async (ctx) => {
      during.set(ctx.key, { text: await inspect(ctx.key), json: await inspect(ctx.key, true) });
      return { ok: true };
    };
    const h: ExecutorHarness = await executorHarness({
      action,
      actionTime: { field: 'destination', seconds: { EU: 10, APAC: 30, LATAM: 45 }, otherwise: 15 },
    });
    const eu = await h.deliver({ amount: 100, destination: 'EU' });
    const latam = await h.deliver({ amount: 100, destination: 'LATAM' });
    // Act
    await h.run(eu.message);
    await h.run(latam.message);
    // Assess
    for (const [key, leaseSeconds] of [[eu.key, 30], [latam.key, 135]] as const) {
      const claimedAt = Number((await h.record(key))?.claimedAt);
      const running = during.get(key)!;
      expect(running.text).toContain(`\n  status     EXECUTING\n`);
      expect(running.text).toContain(`\n  lease      ${leaseSeconds} s (until ${formatTime(claimedAt + leaseSeconds * 1000)})\n`);
      expect((JSON.parse(running.json) as { record: unknown }).record).toMatchObject({ leaseSeconds, leaseUntil: claimedAt + leaseSeconds * 1000 });
      const after = await inspect(key);
      expect(after).toContain(`\n  status     COMPLETED\n`);
      expect(after).toContain(`\n  lease      ${leaseSeconds} s (the last attempt's)\n`);
      const record = (JSON.parse(await inspect(key, true)) as { record: Record<string, unknown> }).record;
      expect(record.leaseSeconds).toBe(leaseSeconds);
      expect(record.leaseUntil).toBeUndefined();
    }
  });

  it('shows no lease for a record never leased', async () => {
    const h = await executorHarness({ action: () => Promise.resolve({ ok: true }) });
    const { key } = await h.deliver({ amount: 1 });
    const text = await inspect(key);
    expect(text).toContain('\n  status     RECEIVED\n');
    expect(text).not.toContain('lease');
    expect((JSON.parse(await inspect(key, true)) as { record: Record<string, unknown> }).record.leaseSeconds).toBeUndefined();
  });
});
