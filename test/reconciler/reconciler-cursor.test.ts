import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { RECONCILER_CURSOR_KEY } from '../../lambdas/store/record-keys.ts';
import { cursorOf } from '../../lambdas/store/reconciler-items.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import type { ReconcileReport } from '../../lambdas/reconciler/reconcile.ts';
import { reconcileScheduled } from '../../lambdas/reconciler/reconcile-cursor.ts';
import type { ReconcilerStore } from '../../lambdas/ports/reconciler-store.ts';
import { HOUR, T0, scene } from './window-scene.ts';
import type { Scene } from './window-scene.ts';

/**
 * 900 records over six hours: every 15th stuck (RECEIVED, its payload kept, last sent hours
 * ago), every 3rd on the ledger's route with one entry, every 30th of those with a second.
 */
async function busyWindow(s: Scene): Promise<{ stuck: string[]; duplicated: string[] }> {
  const records: Record<string, unknown>[] = [];
  const entries: Record<string, unknown>[] = [];
  const stuck: string[] = [];
  const duplicated: string[] = [];
  for (let i = 0; i < 900; i++) {
    const at = T0 - 7 * HOUR + i * 24_000;
    const key = `evt_${String(i).padStart(4, '0')}`;
    if (i % 15 === 1) {
      records.push(s.record('notify', key, at, 'RECEIVED'));
      stuck.push(`notify/${key}`);
    } else if (i % 3 === 0) {
      records.push(s.record('pay', key, at, 'COMPLETED', { runs: i % 90 === 0 ? 2 : 1 }));
      entries.push(s.entry('pay', key, at + 1_000, 1));
      if (i % 90 === 0) {
        entries.push(s.entry('pay', key, at + 3_000, 2));
        duplicated.push(key);
      }
    } else records.push(s.record('notify', key, at, 'COMPLETED'));
  }
  await s.writeRecords(records);
  await s.writeEntries(entries);
  return { stuck, duplicated };
}

const OPTIONS = { current: { fromMs: T0 - 24 * HOUR, toMs: T0 - 5 * 60_000 }, stuckAfterMs: 900_000, maxReenqueue: 500 };

/** Scheduled runs, one after the other, until one finishes its window. */
async function runUntilDone(s: Scene, budgetMs: number, store?: ReconcilerStore): Promise<ReconcileReport[]> {
  const reports: ReconcileReport[] = [];
  for (;;) {
    const report = await reconcileScheduled(s.deps(store === undefined ? {} : { store }), { ...OPTIONS, budgetMs });
    reports.push(report);
    if (!report.stoppedEarly || reports.length > 60) return reports;
  }
}

describe('the reconciler cursor', () => {
  it('finishes a window larger than one run in the next runs, each stuck record re-enqueued once and each duplicate reversed once', async () => {
    // Prepare: pages of 40 records, and a budget that ends a run after a few pages.
    const s = await scene({ pageLimit: 40, ledgerPage: 25 });
    const { stuck, duplicated } = await busyWindow(s);
    const reads: unknown[] = [];
    const counted = new Proxy(s.store, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        return (...args: unknown[]) => {
          if (prop === 'readWindow') reads.push(args[2]);
          return method.apply(target, args);
        };
      },
    });
    // Act
    const reports = await runUntilDone(s, 300, counted);
    // Assess: several runs, each starting where the one before stopped.
    expect(reports.length).toBeGreaterThanOrEqual(3);
    expect(reports.at(-1)?.stoppedEarly).toBe(false);
    for (let i = 1; i < reports.length; i++) expect(reports[i]?.startedFrom).toEqual(reports[i - 1]?.stoppedAt);
    expect(reports.map((r) => r.cursor?.runs)).toEqual(reports.map((_, i) => i + 1));
    const sum = (k: keyof ReconcileReport['counts']): number => reports.reduce((n, r) => n + r.counts[k], 0);
    expect(sum('scanned')).toBe(900);
    expect(sum('reenqueued')).toBe(stuck.length);
    expect([...s.sent.keys()].sort()).toEqual([...stuck].sort());
    expect([...s.sent.values()].every((n) => n === 1)).toBe(true);
    expect(sum('reversed')).toBe(duplicated.length);
    expect(sum('missing') + sum('orphans')).toBe(0);
    // Attempt 2 completed each duplicated record: its entry stays, attempt 1's is reversed.
    for (const key of duplicated) {
      const byEntry = Object.entries(await s.statuses('pay', key)).sort(([a], [b]) => a.localeCompare(b));
      expect(byEntry.map(([, status]) => status)).toEqual(['reversed', 'posted']);
    }
    // Runs resumed inside the window, and carried its keys on: none read the window again from its start.
    expect(reports.some((r) => r.startedFrom?.phase === 'window')).toBe(true);
    expect(reads.filter((start) => start === undefined)).toHaveLength(0);
    // The last run's report rides on its cursor, for the console's overview.
    const dynamo = localDynamoClient(inject('dynamoEndpoint'));
    const cursor = cursorOf((await documentClient(dynamo).send(new GetCommand({ TableName: s.eventsTable, Key: RECONCILER_CURSOR_KEY }))).Item);
    dynamo.destroy();
    const last = reports.at(-1);
    expect(cursor?.lastRun).toEqual({ startedAt: last?.startedAt, endedAt: expect.any(Number) as number, counts: last?.counts, stoppedEarly: false });
  }, 120_000);

  it('continues from the last checkpoint when a run dies, and still sends each stuck record once', async () => {
    // Prepare: a store whose function "dies" (throws) on the 10th re-send claim, after it has written it.
    const s = await scene({ pageLimit: 40 });
    const { stuck } = await busyWindow(s);
    let claims = 0;
    const dying = new Proxy(s.store, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        if (prop !== 'claimResend') return (...args: unknown[]) => method.apply(target, args);
        return async (...args: Parameters<ReconcilerStore['claimResend']>) => {
          const won = await target.claimResend(...args);
          if (++claims === 10) throw new Error('the function died');
          return won;
        };
      },
    });
    // Act: the first run dies; the next runs go on from its last checkpoint.
    const everyPage = { ...OPTIONS, budgetMs: 1_000_000, checkpointEveryMs: 0 };
    await expect(reconcileScheduled(s.deps({ store: dying }), everyPage)).rejects.toThrow('the function died');
    const reports = await runUntilDone(s, 1_000_000);
    // Assess: the record whose claim was written, but never sent, is the one the lost page leaves:
    // claimResend refuses it a second time within the window, and it is sent by no run.
    expect(reports.at(-1)?.stoppedEarly).toBe(false);
    expect(reports[0]?.cursor).toMatchObject({ resumed: true, runs: 2 });
    expect(reports[0]?.startedFrom?.phase).toBe('window');
    expect([...s.sent.values()].every((n) => n === 1)).toBe(true);
    expect(s.sent.size).toBe(stuck.length - 1);
  }, 120_000);

  it('does nothing while another run holds the window, and takes it over once that run\'s lease ended twice the clock bound ago', async () => {
    const s = await scene();
    await busyWindow(s);
    await s.store.takeCursor('other-run', T0 + 60_000, 0);
    // Act: a run while the other holds it.
    const held = await reconcileScheduled(s.deps(), { ...OPTIONS, budgetMs: 1_000_000 });
    // Assess
    expect(held.skipped).toEqual({ reason: 'held', holder: 'other-run', leaseUntil: T0 + 60_000 });
    expect(held.counts.scanned).toBe(0);
    expect(s.sent.size).toBe(0);
    // 5 s after the lease: still held (the bound is 5 s each way). 11 s after: taken over.
    s.clock.t = T0 + 65_000;
    expect((await reconcileScheduled(s.deps(), { ...OPTIONS, budgetMs: 1_000_000 })).skipped).toBeDefined();
    s.clock.t = T0 + 71_000;
    const taken = await reconcileScheduled(s.deps(), { ...OPTIONS, budgetMs: 1_000_000 });
    expect(taken.skipped).toBeUndefined();
    expect(taken.counts.scanned).toBe(900);
  }, 120_000);
});
