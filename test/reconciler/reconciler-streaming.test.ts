import { describe, expect, it } from 'vitest';
import { reconcile } from '../../lambdas/reconciler/reconcile.ts';
import { HOUR, T0, scene } from './window-scene.ts';

const WINDOW = { fromMs: T0 - 24 * HOUR, toMs: T0 - 5 * 60_000, budgetMs: 10_000_000, stuckAfterMs: 900_000, maxReenqueue: 500 };

describe('the reconciler over a window larger than a page', () => {
  it('reads the window and the ledger page by page, and finds every record, duplicate, orphan and missing effect', async () => {
    // Prepare: 600 records in one hour (about 75 a shard) read 20 at a time; entries handed back 7 at a time.
    const s = await scene({ pageLimit: 20, ledgerPage: 7 });
    const records: Record<string, unknown>[] = [];
    const entries: Record<string, unknown>[] = [];
    for (let i = 0; i < 600; i++) {
      const at = T0 - 3 * HOUR + i * 5_000;
      const key = `evt_${i}`;
      if (i % 50 === 5) records.push(s.record('notify', key, at, 'RECEIVED'));
      else if (i % 2 === 0) {
        records.push(s.record('pay', key, at, 'COMPLETED'));
        // Every 100th has a second entry; every 150th (not a 100th) none at all.
        if (i % 150 !== 0 || i % 100 === 0) entries.push(s.entry('pay', key, at + 1_000));
        if (i % 100 === 0) entries.push(s.entry('pay', key, at + 2_000));
      } else records.push(s.record('notify', key, at, 'COMPLETED'));
    }
    entries.push(s.entry('pay', 'evt_nobody-sent-this', T0 - 2 * HOUR));
    await s.writeRecords(records);
    await s.writeEntries(entries);
    // Act
    const report = await reconcile(s.deps(), WINDOW);
    // Assess
    expect(report.stoppedEarly).toBe(false);
    expect(report.counts).toMatchObject({ scanned: 600, reenqueued: 12, reversed: 6, missing: 2, orphans: 1 });
    expect(report.needsAttention.filter((f) => f.finding === 'missing-effect').map((f) => f.key).sort()).toEqual(['evt_150', 'evt_450']);
    expect(report.needsAttention.filter((f) => f.finding === 'orphan-entry').map((f) => f.key)).toEqual(['evt_nobody-sent-this']);
    expect(s.sent.size).toBe(12);
  }, 120_000);

  it('checks thousands of keys received before the window, and reads the lookback from the earliest receipt without a spread', async () => {
    // Prepare: 3,000 records received 26 to 30 hours ago (before the window), each with an effect
    // inside the window (a redrive, say); 10 of them with a first effect before the window too,
    // and one key whose entry belongs to its earlier generation (posted before this one's receipt).
    const s = await scene();
    const records: Record<string, unknown>[] = [];
    const entries: Record<string, unknown>[] = [];
    for (let i = 0; i < 3_000; i++) {
      const at = T0 - 30 * HOUR + i * 4_800;
      const key = `old_${i}`;
      records.push(s.record('pay', key, at, 'COMPLETED'));
      entries.push(s.entry('pay', key, T0 - 2 * HOUR + i));
      if (i % 300 === 0) entries.push(s.entry('pay', key, at + 1_000));
    }
    // Posted inside the lookback (after the earliest receipt), but before this generation of old_2999 was received.
    entries.push(s.entry('pay', 'old_2999', T0 - 29 * HOUR));
    await s.writeRecords(records);
    await s.writeEntries(entries);
    // Act
    const report = await reconcile(s.deps(), WINDOW);
    // Assess: the 10 doubles are reversed, the older generation's entry is no double, nothing is an orphan.
    expect(report.counts).toMatchObject({ scanned: 0, reversed: 10, orphans: 0, missing: 0 });
    expect(Object.values(await s.statuses('pay', 'old_2999')).sort()).toEqual(['posted', 'posted']);
  }, 120_000);
});
