/**
 * The window `npm run bench:reconcile` fills: N records received over 22 hours, as the ingest
 * and the executor leave them, and the demo ledger's entries for them. Every figure follows
 * from the record's index, so the parent (which writes them) and the runner (which
 * reconciles them) agree on what is stuck, duplicated or missing without passing lists.
 *
 *   1 in 10      route `pay` (the demo's payout action, with the ledger); the others `notify`
 *   1 in 2,000   stuck: RECEIVED, its payload kept, last sent when it arrived (hours ago): 500 in a
 *                million, the default maxReenqueuePerRun, so that even a run over the whole window
 *                may re-send them all (past that bound a run reports the rest, reenqueue-limit,
 *                and leaves them to the next window's runs: a rate limit, not what is measured here)
 *   1 in 50,000  FAILED
 *   the rest     COMPLETED; on `pay` with one ledger entry (attempt 1), except
 *                1 in 200 of them completed on run 2 with two entries (attempts 1 and 2: the
 *                reconciler keeps attempt 2's and reverses attempt 1's), and
 *                1 in 10,000 of them with none (a missing effect)
 */
import { resolveConfig } from '../lambdas/config/resolve-config.ts';
import type { ResolvedConfig } from '../lambdas/config/resolve-config.ts';
import { acceptedAnswer, hourBucket } from '../lambdas/domain/event-record.ts';
import type { EventRecord, RecordStatus } from '../lambdas/domain/event-record.ts';
import { toRecordItem } from '../lambdas/store/record-item.ts';
import { LEDGER_TABLE } from '../lambdas/store/table-schema.ts';

const HOUR_MS = 3_600_000;

/** The bench's routes: `pay` runs the demo's payout (its ledger is checked), `notify` has none. */
export function benchConfig(): ResolvedConfig {
  return resolveConfig({
    demo: true,
    routes: [
      { name: 'pay', signature: { scheme: 'standard-webhooks' }, secretName: 'bench/pay', action: 'payout', actionTimeSeconds: 5 },
      { name: 'notify', signature: { scheme: 'stripe' }, secretName: 'bench/notify', action: 'notify', actionTimeSeconds: 5 },
    ],
  });
}

export interface RecordPlan {
  readonly route: 'pay' | 'notify';
  readonly key: string;
  readonly status: RecordStatus;
  readonly receivedAt: number;
  /** Ledger entries, by the attempt that posted each. */
  readonly entries: readonly number[];
  readonly runs: number;
}

export function keyOf(i: number): string {
  return `evt_${i.toString(36).padStart(6, '0')}`;
}

export const isStuck = (i: number): boolean => i % 2000 === 7;
const isFailed = (i: number): boolean => i % 50_000 === 23;
const isPay = (i: number): boolean => i % 10 === 0;
const isDuplicated = (i: number): boolean => i % 2000 === 0;
const isMissing = (i: number): boolean => i % 100_000 === 10;

/** Record i of n, received between t0 - 23 h and t0 - 1 h. */
export function planOf(i: number, n: number, t0: number): RecordPlan {
  const receivedAt = t0 - 23 * HOUR_MS + Math.floor((i * 22 * HOUR_MS) / n);
  const route = isPay(i) ? 'pay' : 'notify';
  const status: RecordStatus = isStuck(i) ? 'RECEIVED' : isFailed(i) ? 'FAILED' : 'COMPLETED';
  const done = status === 'COMPLETED' && route === 'pay';
  const entries = !done || isMissing(i) ? [] : isDuplicated(i) ? [1, 2] : [1];
  return { route, key: keyOf(i), status, receivedAt, entries, runs: status === 'RECEIVED' ? 0 : entries.length === 2 ? 2 : 1 };
}

/** What the reconciler should find in a window of n records. */
export function expectedOf(n: number): { stuck: number; reversed: number; missing: number; failed: number; entries: number } {
  const out = { stuck: 0, reversed: 0, missing: 0, failed: 0, entries: 0 };
  for (let i = 0; i < n; i++) {
    const p = planOf(i, n, 0);
    if (p.status === 'RECEIVED') out.stuck++;
    if (p.status === 'FAILED') out.failed++;
    if (p.route === 'pay' && p.status === 'COMPLETED' && p.entries.length === 0) out.missing++;
    if (p.entries.length === 2) out.reversed++;
    out.entries += p.entries.length;
  }
  return out;
}

/** The record's item, as the claim and the executor's transitions leave it. */
export function recordItemOf(p: RecordPlan): Record<string, unknown> {
  const record: EventRecord = {
    route: p.route,
    key: p.key,
    status: p.status,
    fingerprint: 'f'.repeat(64),
    receivedAt: p.receivedAt,
    expiresAt: Math.floor(p.receivedAt / 1000) + 35 * 86_400,
    answer: acceptedAnswer(p.route, p.key),
    hits: 1,
    attempts: p.runs,
    runs: p.runs,
    redrives: 0,
    lastEnqueuedAt: p.receivedAt,
    // Kept where work may be re-sent from the table: the stuck ones need it.
    ...(p.status === 'RECEIVED' ? { body: '{"amount":1}', bodyEncoding: 'utf8' as const, headers: {} } : {}),
    ...(p.status === 'FAILED' ? { lastError: 'PermanentActionError: the bench' } : {}),
  };
  const item = toRecordItem(record);
  if (p.status === 'COMPLETED') item.completedAt = p.receivedAt + 2_000;
  return item;
}

/** The demo ledger items of a record, as DynamoDbLedger.post writes them. */
export function entryItemsOf(p: RecordPlan): Record<string, unknown>[] {
  return p.entries.map((attempt) => {
    const postedAt = p.receivedAt + attempt * 1_000;
    const entryId = `ent_${p.key}_${attempt}`;
    return {
      entryId,
      route: p.route,
      idempotencyKey: p.key,
      amount: 100,
      currency: 'EUR',
      postedAt,
      attempt,
      status: 'posted',
      [LEDGER_TABLE.byHourIndex.partitionKey]: hourBucket(postedAt),
      [LEDGER_TABLE.byHourIndex.sortKey]: `${new Date(postedAt).toISOString()}#${entryId}`,
    };
  });
}
