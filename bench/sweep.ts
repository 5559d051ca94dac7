/**
 * `node bench/sweep.ts [--records N] [--quick]`: the sweep of expired items (lambdas/reconciler/
 * expiry-sweep.ts) on DynamoDB Local, one delete at a time beside SWEEP_CONCURRENCY at once.
 * One day's expiries at the advertised rate is 330,000 records with about one log item each;
 * the default run sweeps a 20,000-record slice of it (2,000 with --quick) and extrapolates,
 * since two shared cores fill the whole day in minutes, not seconds. Prints items/s, peak heap,
 * and whether a day fits in a day's hourly runs (24 x DEPLOYED_BUDGET_MS, reconciler-budget.ts).
 * DynamoDB Local runs in-process on the same cores, with no network: its figures are an upper
 * bound on the rate and say nothing of AWS latency (about 5 to 10 ms a write within a Region,
 * more with MRSC's round trip to a second Region: Prescriptive Guidance, "DynamoDB global tables").
 */
import { parseArgs } from 'node:util';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { sweepExpired, SWEEP_CONCURRENCY } from '../lambdas/reconciler/expiry-sweep.ts';
import { DEPLOYED_BUDGET_MS } from '../lambdas/reconciler/reconciler-budget.ts';
import { documentClient } from '../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExpirySweepStore } from '../lambdas/store/dynamodb-expiry-sweep-store.ts';
import { toRecordItem } from '../lambdas/store/record-item.ts';
import { recordPk } from '../lambdas/store/record-keys.ts';
import { createEventsTable, localDynamoClient } from '../local/aws-clients.ts';
import { startLocalDynamo } from '../local/local-aws.ts';
import { sampleRecord } from '../test/support/event-records.ts';

const DAY_RECORDS = 330_000;
const HOUR_MS = 3_600_000;
const { values } = parseArgs({ options: { records: { type: 'string' }, quick: { type: 'boolean', default: false } } });
const records = Number(values.records ?? (values.quick ? 2_000 : 20_000));

const local = await startLocalDynamo();
try {
  const client = localDynamoClient(local.endpoint);
  const doc = documentClient(client);
  const now = Date.UTC(2026, 10, 29, 12);
  const receivedFrom = now - 40 * 86_400_000;
  const expiresAt = Math.floor(now / 1000) - 86_400;

  /** A table holding `records` expired records, spread over the hours of a day 40 days ago, a log item each. */
  const fill = async (): Promise<string> => {
    const table = await createEventsTable(client, `sweep-${Math.random().toString(36).slice(2, 8)}`);
    const items: Record<string, unknown>[] = [];
    for (let i = 0; i < records; i++) {
      const receivedAt = receivedFrom + Math.floor((i * 86_400_000) / records);
      const key = `evt_${i}`;
      items.push(toRecordItem(sampleRecord('notify', key, receivedAt, { status: 'COMPLETED', expiresAt })));
      items.push({ pk: recordPk('notify', key), sk: `LOG#${String(receivedAt).padStart(13, '0')}#0#0001#execution#b`, expiresAt });
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let at = next; at < items.length; at = next) {
          next += 25;
          let pending = items.slice(at, at + 25).map((Item) => ({ PutRequest: { Item } }));
          while (pending.length > 0) {
            const out = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
            pending = (out.UnprocessedItems?.[table] ?? []) as typeof pending;
          }
        }
      }),
    );
    return table;
  };

  const rows: { concurrency: number; items: number; seconds: number; perSecond: number; heapMb: number }[] = [];
  for (const concurrency of [1, SWEEP_CONCURRENCY]) {
    const table = await fill();
    const store = new DynamoDbExpirySweepStore(client, table);
    let peakHeap = 0;
    const sample = setInterval(() => {
      peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    }, 50);
    const started = performance.now();
    const { report } = await sweepExpired(
      store,
      undefined,
      { minTtlSeconds: 35 * 86_400, clockSkewSeconds: 5, sinceMs: receivedFrom - HOUR_MS, concurrency },
      { now: () => now, overBudget: () => false, checkpoint: () => Promise.resolve(true) },
    );
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sample);
    if (report.records !== records) throw new Error(`swept ${report.records} records of ${records}`);
    rows.push({ concurrency, items: report.swept, seconds, perSecond: report.swept / seconds, heapMb: peakHeap / 2 ** 20 });
  }

  const dayItems = DAY_RECORDS * 2;
  const dayBudgetSeconds = (24 * DEPLOYED_BUDGET_MS) / 1000;
  const out = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  out(`sweep of ${records} expired records with one log item each (${2 * records} items), DynamoDB Local, this machine\n`);
  out('| deletes at once | items | s | items/s | peak heap MB | a day (660,000 items) takes | fits 24 runs x 285 s |');
  out('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const daySeconds = dayItems / r.perSecond;
    out(
      `| ${r.concurrency} | ${r.items} | ${r.seconds.toFixed(1)} | ${Math.round(r.perSecond)} | ${r.heapMb.toFixed(0)} | ${Math.round(daySeconds)} s | ${daySeconds <= dayBudgetSeconds ? 'yes' : 'no'} (${((100 * daySeconds) / dayBudgetSeconds).toFixed(0)}% of ${dayBudgetSeconds} s) |`,
    );
  }
} finally {
  await local.stop();
}
