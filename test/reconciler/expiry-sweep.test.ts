import { describe, expect, inject, it } from 'vitest';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createReconciler } from '../../lambdas/reconciler/create-reconciler.ts';
import { reconcileScheduled } from '../../lambdas/reconciler/reconcile-cursor.ts';
import type { ScheduledRunOptions } from '../../lambdas/reconciler/reconcile-cursor.ts';
import type { ReconcileReport } from '../../lambdas/reconciler/reconcile.ts';
import type { ExpirySweepStore } from '../../lambdas/ports/reconciler-store.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExpirySweepStore } from '../../lambdas/store/dynamodb-expiry-sweep-store.ts';
import { RECONCILER_CURSOR_KEY, RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { HOUR, T0, config, scene } from './window-scene.ts';
import type { Scene } from './window-scene.ts';

const DAY = 24 * HOUR;
const NOW_S = Math.floor(T0 / 1000);
/** Routes' shortest TTL for these tests: 3 days, so records received 6 days ago lie in buckets the sweep visits. */
const SWEEP = { minTtlSeconds: 3 * 86_400, clockSkewSeconds: 5, sinceMs: T0 - 6 * DAY - HOUR };

const dynamo = () => localDynamoClient(inject('dynamoEndpoint'));

function runOptions(s: Scene, more: Partial<ScheduledRunOptions> = {}): ScheduledRunOptions {
  return { current: { fromMs: s.clock.t - DAY, toMs: s.clock.t - 300_000 }, budgetMs: 1_000_000, stuckAfterMs: 900_000, maxReenqueue: 500, sweep: SWEEP, ...more };
}

/** A completed record received `ageMs` ago, expiring at `expiresAt`, with one log item of its generation. */
function recordWithLog(s: Scene, key: string, receivedAt: number, expiresAt: number): Record<string, unknown>[] {
  return [
    s.record('notify', key, receivedAt, 'COMPLETED', { expiresAt }),
    { pk: recordPk('notify', key), sk: `LOG#${String(receivedAt).padStart(13, '0')}#x#0001#execution#abcd`, expiresAt, outcome: 'retryable' },
  ];
}

async function itemsOf(s: Scene, key: string): Promise<string[]> {
  const out = await documentClient(dynamo()).send(
    new QueryCommand({ TableName: s.eventsTable, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': recordPk('notify', key) } }),
  );
  return (out.Items ?? []).map((i) => String(i.sk).split('#')[0] as string).sort();
}

describe('the sweep of expired items (a table with no TTL)', () => {
  it('deletes expired records with their log items, and expired key chunks; keeps what expired less than the clock bound ago, and live records', async () => {
    // Prepare: six days ago, one record expired an hour ago, one 3 s ago (inside twice the 5 s bound), one live; two key chunks.
    const s = await scene();
    const at = T0 - 6 * DAY;
    await s.writeRecords([
      ...recordWithLog(s, 'gone', at, NOW_S - 3600),
      ...recordWithLog(s, 'just-expired', at + 60_000, NOW_S - 3),
      ...recordWithLog(s, 'live', at + 120_000, NOW_S + DAY / 1000),
      { ...RECONCILER_CURSOR_KEY, sk: 'KEYS#w1#r1#0', expiresAt: NOW_S - 3600 },
      { ...RECONCILER_CURSOR_KEY, sk: 'KEYS#w2#r2#0', expiresAt: NOW_S + 3600 },
    ]);
    const expiry = new DynamoDbExpirySweepStore(dynamo(), s.eventsTable);
    // Act
    const report = await reconcileScheduled({ ...s.deps(), expiry }, runOptions(s));
    // Assess
    expect(await itemsOf(s, 'gone')).toEqual([]);
    expect(await itemsOf(s, 'just-expired')).toEqual(['LOG', RECORD_SK]);
    expect(await itemsOf(s, 'live')).toEqual(['LOG', RECORD_SK]);
    const chunks = await expiry.readKeyChunks();
    expect(chunks.map((c) => c.sk)).toEqual(['KEYS#w2#r2#0']);
    expect(report.sweep).toMatchObject({ swept: 3, records: 1, kept: 0, caughtUp: true });
    // Once the bound has passed, the next run's visit of the bucket (remembered with its earliest expiry) takes it.
    s.clock.t += 60_000;
    const later = await reconcileScheduled({ ...s.deps(), expiry }, runOptions(s));
    expect(await itemsOf(s, 'just-expired')).toEqual([]);
    expect(await itemsOf(s, 'live')).toEqual(['LOG', RECORD_SK]);
    expect(later.sweep).toMatchObject({ records: 1, swept: 2 });
  }, 60_000);

  it('keeps a record renewed between the read of its partition and its delete', async () => {
    // Prepare: an expired record; a store whose partition read is followed, before any delete, by a renewal.
    const s = await scene();
    await s.writeRecords(recordWithLog(s, 'renewed', T0 - 6 * DAY, NOW_S - 3600));
    const real = new DynamoDbExpirySweepStore(dynamo(), s.eventsTable);
    const renewing: ExpirySweepStore = {
      readBucket: (bucket, shard, after) => real.readBucket(bucket, shard, after),
      readKeyChunks: () => real.readKeyChunks(),
      deleteExpired: (item, cutoff) => real.deleteExpired(item, cutoff),
      readPartition: async (pk) => {
        const items = await real.readPartition(pk);
        // Another writer (a resend's expiry follow-up) moves the record's expiry on, after the sweep read it.
        await documentClient(dynamo()).send(
          new UpdateCommand({ TableName: s.eventsTable, Key: { pk, sk: RECORD_SK }, UpdateExpression: 'SET expiresAt = :e', ExpressionAttributeValues: { ':e': NOW_S + 15 * 86_400 } }),
        );
        return items;
      },
    };
    // Act
    const report = await reconcileScheduled({ ...s.deps(), expiry: renewing }, runOptions(s));
    // Assess: the record stays, renewed; only its log item, expired by its own expiry, went (as TTL would take it).
    const record = await documentClient(dynamo()).send(new GetCommand({ TableName: s.eventsTable, Key: { pk: recordPk('notify', 'renewed'), sk: RECORD_SK } }));
    expect(record.Item?.expiresAt).toBe(NOW_S + 15 * 86_400);
    expect(report.sweep).toMatchObject({ records: 0, kept: 1, swept: 1 });
  }, 60_000);

  it('stops when its budget ends and finishes in the next runs, each record deleted once', async () => {
    // Prepare: 240 expired records over three hour buckets, small pages, a budget of a few pages a run (the clock moves 1 ms a read).
    const s = await scene();
    const records = Array.from({ length: 240 }, (_, i) => s.record('notify', `evt_${i}`, T0 - 6 * DAY + i * 45_000, 'COMPLETED', { expiresAt: NOW_S - 7200 }));
    await s.writeRecords(records);
    const expiry = new DynamoDbExpirySweepStore(dynamo(), s.eventsTable, { pageLimit: 10 });
    // Act
    const reports: ReconcileReport[] = [];
    for (let run = 0; run < 40; run++) {
      const report = await reconcileScheduled({ ...s.deps(), expiry }, runOptions(s, { budgetMs: 520, sweep: { ...SWEEP, sinceMs: T0 - 6 * DAY, concurrency: 4 }, checkpointEveryMs: 0 }));
      reports.push(report);
      if (reports.reduce((n, r) => n + (r.sweep?.records ?? 0), 0) >= 240) break;
      s.clock.t += HOUR;
    }
    // Assess: the first run stopped inside the records, the next went on from there; every record deleted by exactly one run.
    expect(reports.length).toBeGreaterThanOrEqual(2);
    expect(reports[0]?.sweep?.caughtUp).toBe(false);
    expect(reports[0]?.sweep?.records).toBeGreaterThan(0);
    expect(reports[0]?.sweep?.records).toBeLessThan(240);
    expect(reports.reduce((n, r) => n + (r.sweep?.records ?? 0), 0)).toBe(240);
    expect(reports.reduce((n, r) => n + (r.sweep?.kept ?? 0), 0)).toBe(0);
    for (const i of [0, 119, 239]) expect(await itemsOf(s, `evt_${i}`)).toEqual([]);
  }, 120_000);

  it('never runs in a deployment of one Region (its table has TTL)', async () => {
    // Prepare: an expired record, and the reconciler as the Lambda wires it, with no regions configured.
    const s = await scene();
    await s.writeRecords(recordWithLog(s, 'expired', T0 - 6 * DAY, NOW_S - 3600));
    expect(config.regions).toBeUndefined();
    const reconciler = createReconciler({
      dynamo: dynamo(),
      eventsTable: s.eventsTable,
      queue: { send: () => Promise.resolve() },
      config,
      now: () => ++s.clock.t,
      sweepSinceMs: SWEEP.sinceMs,
    });
    // Act
    const report = await reconciler.run({ budgetMs: 1_000_000, skipIfFinishedRecently: true });
    // Assess
    expect(report.sweep).toBeUndefined();
    expect(await itemsOf(s, 'expired')).toEqual(['LOG', RECORD_SK]);
  }, 60_000);
});
