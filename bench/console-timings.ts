/**
 * `node bench/console-timings.ts [--records 330000] [--concurrency 8]`: the console's reads on a
 * full day (issue 46: a page of 50 deliveries under 300 ms, a delivery's detail under 100 ms,
 * locally). It starts its own DynamoDB Local (as the local stack starts it), writes the day's
 * records with the store's own item builder (bench/reconcile-data.ts's mix: two routes, some
 * FAILED and stuck), 25 a BatchWriteItem, `--concurrency` at once, saying how far it got, then
 * times each read 7 times through the console's own operations and prints the medians.
 */
import { parseArgs } from 'node:util';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { resolveConfig } from '../lambdas/config/resolve-config.ts';
import { documentClient } from '../lambdas/store/dynamodb-event-store.ts';
import { failedIndexKeys } from '../lambdas/store/record-transitions.ts';
import type { Target } from '../cli/target.ts';
import { readOverview } from '../cli/console/overview.ts';
import { inspectDelivery } from '../cli/operations/inspect-delivery.ts';
import { recentDeliveries } from '../cli/operations/recent-deliveries.ts';
import { createEventsTable, createLedgerTable, createQueuePair, localDynamoClient, localSqsClient } from '../local/aws-clients.ts';
import { startLocalDynamo, startLocalSqs } from '../local/local-aws.ts';
import { planOf, recordItemOf } from './reconcile-data.ts';

const { values } = parseArgs({ options: { records: { type: 'string', default: '330000' }, concurrency: { type: 'string', default: '8' } } });
const n = Number(values.records);
const concurrency = Number(values.concurrency);
const say = (line: string): void => {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
};

const [dynamoLocal, sqsLocal] = await Promise.all([startLocalDynamo(), startLocalSqs()]);
const dynamo = localDynamoClient(dynamoLocal.endpoint);
const sqs = localSqsClient(sqsLocal.endpoint);
const eventsTable = await createEventsTable(dynamo, 'console-bench-events');
const ledgerTable = await createLedgerTable(dynamo, 'console-bench-ledger');
const queues = await createQueuePair(sqs, sqsLocal.endpoint, 'console-bench', { maxReceiveCount: 8, visibilityTimeoutSeconds: 30 });
const route = (name: string) => ({ name, signature: { scheme: 'standard-webhooks' as const }, secretName: `bench/${name}`, action: 'payout', actionTimeSeconds: 1 });
const config = resolveConfig({ routes: [route('pay'), route('notify')], demo: true });
// As a deployed receiver's target: the table, the queues, the demo ledger's table (read for a detail).
const target: Target = {
  kind: 'aws',
  description: 'the bench table',
  dynamo,
  sqs,
  eventsTable,
  ledgerTable,
  queueUrl: queues.queueUrl,
  dlqUrl: queues.dlqUrl,
  config,
  routes: config.routes.map((r) => r.name),
  queueArn: () => Promise.resolve('arn:aws:sqs:us-east-1:000000000000:console-bench'),
  close: () => undefined,
};
const doc = documentClient(dynamo);
// The day ends a minute from now: planOf spreads the records over [t0 - 23 h, t0 - 1 h).
const t0 = Date.now() + 3_600_000 - 60_000;

async function writeDay(): Promise<void> {
  let next = 0;
  let written = 0;
  let reported = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (;;) {
      const from = next;
      next += 25;
      if (from >= n) return;
      let items: Record<string, unknown>[] = [];
      for (let i = from; i < Math.min(n, from + 25); i++) {
        const p = planOf(i, n, t0);
        items.push({ ...recordItemOf(p), ...(p.status === 'FAILED' ? failedIndexKeys(p.route, p.key, p.receivedAt) : {}) });
      }
      const batch = items.length;
      while (items.length > 0) {
        const out = await doc.send(new BatchWriteCommand({ RequestItems: { [eventsTable]: items.map((Item) => ({ PutRequest: { Item } })) } }));
        items = (out.UnprocessedItems?.[eventsTable] ?? []).map((r) => r.PutRequest?.Item ?? {});
      }
      written += batch;
      if (written - reported >= 10_000 || written === n) {
        reported = written;
        const s = (performance.now() - started) / 1000;
        say(`written ${written} of ${n} in ${s.toFixed(0)} s (${Math.round(written / s)} records/s)`);
      }
    }
  }));
}

async function timed<T>(what: string, work: () => Promise<T>, show: (t: T) => string, runs = 7): Promise<void> {
  const ms: number[] = [];
  let last: T | undefined;
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    last = await work();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  say(`${what}: median ${ms[Math.floor(runs / 2)]?.toFixed(0)} ms, best ${ms[0]?.toFixed(0)} ms, worst ${ms.at(-1)?.toFixed(0)} ms (${runs} runs); ${last === undefined ? '' : show(last)}`);
}

try {
  say(`writing ${n} records, 25 a BatchWriteItem, ${concurrency} at once`);
  await writeDay();
  const now = Date.now();
  const day = { sinceMs: now - 86_400_000, untilMs: now + 60_000 };
  await timed('a page of 50, newest first', () => recentDeliveries(target, day, { limit: 50 }), (p) => `${p.rows.length} rows, ${p.read} index copies read`);
  const first = await recentDeliveries(target, day, { limit: 50 });
  await timed('the second page', () => recentDeliveries(target, day, { limit: 50, ...(first.next === undefined ? {} : { after: first.next }) }), (p) => `${p.rows.length} rows`);
  await timed('notify, FAILED, the day', () => recentDeliveries(target, { ...day, route: 'notify', status: 'FAILED' }, { limit: 50 }), (p) => `${p.rows.length} rows, ${p.read} read, ${p.next === undefined ? 'the whole day' : 'more to read'}`);
  const key = planOf(Math.floor(n / 2), n, t0);
  await timed("a delivery's detail", () => inspectDelivery(target, key.route, key.key, { now }), (f) => `${f.record?.status ?? 'none'}, ${f.log.length} log entries`);
  const failed = planOf(Array.from({ length: n }, (_, i) => i).find((i) => planOf(i, n, t0).status === 'FAILED') ?? 0, n, t0);
  await timed("a FAILED delivery's detail", () => inspectDelivery(target, failed.route, failed.key, { now }), (f) => f.record?.status ?? 'none');
  await timed('the overview (reads every index copy of the day)', () => readOverview(target, Date.now()), (o) => `${o.routes.map((r) => `${r.state.route} ${r.day.received}`).join(', ')} received in the day`, 3);
} finally {
  dynamo.destroy();
  sqs.destroy();
  await Promise.all([dynamoLocal.stop(), sqsLocal.stop()]);
}
