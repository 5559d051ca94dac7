/**
 * `node bench/console-timings.ts [--records 330000]`: the console's reads on a full day, against a
 * running local stack (RETRYPROOF_LOCAL_DIR): it writes the day's records (bench/reconcile-data.ts's
 * mix) into the stack's table, then times a page of 50 deliveries, a filtered page, and a detail.
 */
import { parseArgs } from 'node:util';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../lambdas/store/dynamodb-event-store.ts';
import { failedIndexKeys } from '../lambdas/store/record-transitions.ts';
import { resolveTarget } from '../cli/target.ts';
import { inspectDelivery } from '../cli/operations/inspect-delivery.ts';
import { recentDeliveries } from '../cli/operations/recent-deliveries.ts';
import { planOf, recordItemOf } from './reconcile-data.ts';

const { values } = parseArgs({ options: { records: { type: 'string', default: '330000' }, skipWrite: { type: 'boolean' } } });
const n = Number(values.records);
const target = await resolveTarget({ local: true });
const doc = documentClient(target.dynamo);
const t0 = Date.now() + 2 * 3_600_000 - 60_000;

async function write(): Promise<void> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (;;) {
      const from = next;
      next += 25;
      if (from >= n) return;
      let items: Record<string, unknown>[] = [];
      for (let i = from; i < Math.min(n, from + 25); i++) {
        const p = planOf(i, n, t0);
        items.push({ ...recordItemOf(p), ...(p.status === 'FAILED' ? failedIndexKeys(p.route, p.key, p.receivedAt) : {}) });
      }
      while (items.length > 0) {
        const out = await doc.send(new BatchWriteCommand({ RequestItems: { [target.eventsTable]: items.map((Item) => ({ PutRequest: { Item } })) } }));
        items = (out.UnprocessedItems?.[target.eventsTable] ?? []).map((r) => r.PutRequest?.Item ?? {});
      }
      if (from % 50_000 === 0) process.stdout.write(`written ${from} of ${n} in ${Math.round(performance.now() - started)} ms\n`);
    }
  }));
}

async function timed<T>(what: string, work: () => Promise<T>, show: (t: T) => string): Promise<void> {
  const ms: number[] = [];
  let last: T | undefined;
  for (let run = 0; run < 7; run++) {
    const start = performance.now();
    last = await work();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  process.stdout.write(`${what}: median ${ms[3]?.toFixed(0)} ms, best ${ms[0]?.toFixed(0)} ms, worst ${ms[6]?.toFixed(0)} ms; ${last === undefined ? '' : show(last)}\n`);
}

if (values.skipWrite !== true) await write();
const now = Date.now();
const day = { sinceMs: now - 86_400_000, untilMs: now + 60_000 };
await timed('a page of 50, newest first', () => recentDeliveries(target, day, { limit: 50 }), (p) => `${p.rows.length} rows, ${p.read} index copies read`);
const first = await recentDeliveries(target, day, { limit: 50 });
await timed('the second page', () => recentDeliveries(target, day, { limit: 50, ...(first.next === undefined ? {} : { after: first.next }) }), (p) => `${p.rows.length} rows`);
await timed('notify, FAILED, the day', () => recentDeliveries(target, { ...day, route: 'notify', status: 'FAILED' }, { limit: 50 }), (p) => `${p.rows.length} rows, ${p.read} read, ${p.next === undefined ? 'the whole day' : 'more to read'}`);
const key = planOf(Math.floor(n / 2), n, t0);
await timed("a delivery's detail", () => inspectDelivery(target, key.route, key.key), (f) => `${f.record?.status ?? 'none'}, ${f.log.length} log entries`);
target.close();
