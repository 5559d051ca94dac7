import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import { keptEntryOf } from '../../lambdas/reconciler/phase-effects.ts';
import { reconcile } from '../../lambdas/reconciler/reconcile.ts';
import { HOUR, T0, scene } from './window-scene.ts';

const WINDOW = { fromMs: T0 - 24 * HOUR, toMs: T0 - 5 * 60_000, budgetMs: 10_000_000, stuckAfterMs: 900_000, maxReenqueue: 500 };

function entry(entryId: string, postedAt: number, attempt?: number): LedgerEntry {
  return { entryId, route: 'pay', idempotencyKey: 'k', postedAt, status: 'posted', ...(attempt === undefined ? {} : { attempt }) };
}

describe('the entry the reconciler keeps among a key\'s posted entries', () => {
  it('is the one the completing run posted, else the earliest', () => {
    const first = entry('a', 1, 1);
    const second = entry('b', 2, 2);
    expect(keptEntryOf([first, second], { runs: 2 })).toBe(second);
    expect(keptEntryOf([first, second], { runs: 3 })).toBe(first);
    expect(keptEntryOf([entry('a', 1), entry('b', 2)], { runs: 2 }).entryId).toBe('a');
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

  it('reverses nothing of a FAILED record whose earlier run posted and died before its effect, and reports it (seed 961: the genuine charge was refunded, then a redrive completed the key with it)', async () => {
    // Prepare: run 2 posted and died before its charge; run 3 posted, charged and died before
    // completing; the record ran out of attempts (FAILED). Keeping the earliest reverses run 3's.
    const s = await scene();
    const at = T0 - 3 * HOUR;
    await s.writeRecords([s.record('pay', 'failed', at, 'FAILED', { runs: 3, attempts: 3 })]);
    await s.writeEntries([s.entry('pay', 'failed', at + 1_000, 2), s.entry('pay', 'failed', at + 5_000, 3)]);
    // Act
    const report = await reconcile(s.deps(), WINDOW);
    // Assess: both stand until a redrive's completing run names the one to keep; a person is told.
    expect(report.counts.reversed).toBe(0);
    expect(Object.values(await s.statuses('pay', 'failed'))).toEqual(['posted', 'posted']);
    expect(report.needsAttention).toContainEqual({
      route: 'pay',
      key: 'failed',
      finding: 'failed-with-entries',
      detail: `entries ent_failed_${at + 1_000}, ent_failed_${at + 5_000}`,
    });
  }, 60_000);

  it.each([
    ['before the window (the lookback)', 30 * HOUR],
    ['at the window\'s start', 24 * HOUR - 2_000],
  ])('reverses the duplicate of a record received %s whose first entry carries a stamp seconds before the receipt (the executor\'s clock behind the ingest\'s)', async (_where, ago) => {
    // Prepare: received at `at` by the ingest's clock; run 1 posted 4 s later in true time,
    // stamped 6 s before `at` by an executor 10 s behind (each clock within 5 s of true time),
    // and died before its effect; run 2 posted in the window and completed the record.
    const s = await scene();
    const at = T0 - ago;
    await s.writeRecords([s.record('pay', 'skewed', at, 'COMPLETED', { runs: 2, attempts: 2 })]);
    await s.writeEntries([s.entry('pay', 'skewed', at - 6_000, 1), s.entry('pay', 'skewed', T0 - HOUR, 2)]);
    // Act
    const report = await reconcile(s.deps(), WINDOW);
    // Assess: run 1's entry is of this generation, and the completing run's is kept.
    expect(await s.statuses('pay', 'skewed')).toEqual({ [`ent_skewed_${at - 6_000}`]: 'reversed', [`ent_skewed_${T0 - HOUR}`]: 'posted' });
    expect(report.counts.reversed).toBe(1);
  }, 60_000);
});
