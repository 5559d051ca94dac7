import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import { keptEntryOf, reconcile } from '../../lambdas/reconciler/reconcile.ts';
import { HOUR, T0, scene } from './window-scene.ts';

const WINDOW = { fromMs: T0 - 24 * HOUR, toMs: T0 - 5 * 60_000, budgetMs: 10_000_000, stuckAfterMs: 900_000, maxReenqueue: 500 };

function entry(entryId: string, postedAt: number, attempt?: number): LedgerEntry {
  return { entryId, route: 'pay', idempotencyKey: 'k', postedAt, status: 'posted', ...(attempt === undefined ? {} : { attempt }) };
}

describe('the entry the reconciler keeps among a key\'s posted entries', () => {
  it('is the one the completing run posted, else the earliest', () => {
    const first = entry('a', 1, 1);
    const second = entry('b', 2, 2);
    expect(keptEntryOf([first, second], { status: 'COMPLETED', runs: 2 })).toBe(second);
    expect(keptEntryOf([first, second], { status: 'COMPLETED', runs: 3 })).toBe(first);
    expect(keptEntryOf([entry('a', 1), entry('b', 2)], { status: 'COMPLETED', runs: 2 }).entryId).toBe('a');
    expect(keptEntryOf([first, second], { status: 'FAILED', runs: 2 })).toBe(first);
  });

  it('reverses attempt 1\'s entry when attempt 2 completed the record, and leaves a record still in flight alone', async () => {
    // Prepare: attempt 1 posted and failed (a 503, no effect), attempt 2 posted and completed;
    // a record with no attempts on its entries; one still EXECUTING with two entries.
    const s = await scene();
    const at = T0 - 3 * HOUR;
    await s.writeRecords([
      s.record('pay', 'by-run', at, 'COMPLETED', { runs: 2, attempts: 2 }),
      s.record('pay', 'no-attempts', at, 'COMPLETED', { runs: 2, attempts: 2 }),
      s.record('pay', 'in-flight', at, 'EXECUTING', { runs: 2, attempts: 2, leaseUntil: T0 + HOUR, lastEnqueuedAt: T0 }),
    ]);
    await s.writeEntries([
      s.entry('pay', 'by-run', at + 1_000, 1),
      s.entry('pay', 'by-run', at + 5_000, 2),
      s.entry('pay', 'no-attempts', at + 1_000),
      s.entry('pay', 'no-attempts', at + 5_000),
      s.entry('pay', 'in-flight', at + 1_000, 1),
      s.entry('pay', 'in-flight', at + 5_000, 2),
    ]);
    // Act
    const report = await reconcile(s.deps(), WINDOW);
    // Assess
    expect(report.counts.reversed).toBe(2);
    expect(await s.statuses('pay', 'by-run')).toEqual({ [`ent_by-run_${at + 1_000}`]: 'reversed', [`ent_by-run_${at + 5_000}`]: 'posted' });
    expect(await s.statuses('pay', 'no-attempts')).toEqual({ [`ent_no-attempts_${at + 1_000}`]: 'posted', [`ent_no-attempts_${at + 5_000}`]: 'reversed' });
    expect(Object.values(await s.statuses('pay', 'in-flight'))).toEqual(['posted', 'posted']);
    expect(report.reversals).toEqual(
      expect.arrayContaining([expect.objectContaining({ key: 'by-run', keptEntryId: `ent_by-run_${at + 5_000}` })]) as unknown,
    );
  }, 60_000);
});
