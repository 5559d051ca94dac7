/**
 * The demo payout's `simulate` field is the demo's: honoured on the demo routes only, so a
 * deploy's other routes (the shipped `stripe`) cannot be slowed or doubled by a sender.
 */
import { describe, expect, it } from 'vitest';
import type { ActionContext } from '../../lambdas/actions/action.ts';
import { PermanentActionError, RetryableActionError } from '../../lambdas/actions/action.ts';
import type { Ledger, LedgerEntry, NewLedgerEntry } from '../../lambdas/ledger/ledger.ts';
import { honoursSimulate, payoutAction } from '../../lambdas/demo/payout.ts';

/** A ledger that keeps entries in memory: this spec is about the action, not the table. */
function memoryLedger(): Ledger & { readonly entries: LedgerEntry[] } {
  const entries: LedgerEntry[] = [];
  return {
    entries,
    post: (entry: NewLedgerEntry) => {
      const posted: LedgerEntry = { ...entry, entryId: `e${entries.length + 1}`, status: 'posted' };
      entries.push(posted);
      return Promise.resolve(posted);
    },
    listWindow: () => Promise.resolve(entries),
    reverse: () => Promise.resolve('not-found'),
  };
}

function ctx(route: string, body: unknown, attempt = 1): ActionContext {
  return {
    route,
    key: 'k1',
    idempotencyKey: `${route}/k1`,
    body,
    rawBody: Buffer.from(JSON.stringify(body)),
    headers: {},
    attempt,
    deadline: Date.now() + 10_000,
    signal: new AbortController().signal,
  };
}

describe('the demo payout', () => {
  it('honours simulate on the demo route and the local demo-<scheme> routes only', () => {
    expect(['demo', 'demo-stripe', 'demo-v1a'].map(honoursSimulate)).toEqual([true, true, true]);
    expect(['stripe', 'orders', 'demox', 'my-demo'].map(honoursSimulate)).toEqual([false, false, false, false]);
  });

  it('fails as asked on the demo route', async () => {
    const ledger = memoryLedger();
    await expect(payoutAction(ledger)(ctx('demo', { amount: 5, simulate: { failAttempts: 1 } }))).rejects.toBeInstanceOf(RetryableActionError);
    expect(ledger.entries).toEqual([]);
  });

  it('fails for good on the first permanentErrorRuns runs, counted across redrives, and pays on the run after', async () => {
    const ledger = memoryLedger();
    const pay = payoutAction(ledger);
    const body = { amount: 5, simulate: { permanentErrorRuns: 1 } };
    await expect(pay(ctx('demo', body, 1))).rejects.toBeInstanceOf(PermanentActionError);
    expect(ledger.entries).toEqual([]);
    // A person's redrive: the run number goes on (2), the downstream is back.
    expect(await pay(ctx('demo', body, 2))).toMatchObject({ amount: 5 });
    expect(ledger.entries).toHaveLength(1);
  });

  it('ignores simulate on any other route: one entry, no failure, no delay', async () => {
    const ledger = memoryLedger();
    const pay = payoutAction(ledger);
    const result = await pay(ctx('stripe', { amount: 5, simulate: { failAttempts: 3, permanentError: true, permanentErrorRuns: 2, delayMs: 60_000, crashAfterEffect: true } }));
    expect(result).toMatchObject({ amount: 5, currency: 'EUR' });
    expect(ledger.entries).toHaveLength(1);
  });
});
