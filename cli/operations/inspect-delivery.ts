/**
 * Everything known about one delivery: its record, its execution log (attempts and
 * reconciler corrections) and its ledger entries. The body is left out unless asked
 * for: operators share this output, and bodies carry customer data.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { historyOf, readLogItems } from '../../lambdas/store/execution-history.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import type { LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { fromRecordItem } from '../../lambdas/store/record-item.ts';
import type { Target } from '../target.ts';
import { ledgerWindow } from './ledger-entries.ts';

export interface RecordView {
  readonly route: string;
  readonly key: string;
  readonly status: string;
  readonly hits: number;
  /** Runs in the current budget (since acceptance or the last redrive). */
  readonly attempts: number;
  /** Runs in all, across redrives. */
  readonly runs: number;
  readonly redrives: number;
  /** Times its run waited for its route's rate limit; none spent an attempt. */
  readonly deferrals: number;
  /**
   * Set while the work waits for its route's rate limit: when its delayed wake-up comes back
   * (RECEIVED, its last deferral's lastEnqueuedAt still ahead).
   */
  readonly waitingUntil?: number;
  readonly receivedAt: number;
  readonly expiresAt: number;
  readonly answerStatus: number;
  readonly fingerprint: string;
  readonly bodyBytes: number;
  /**
   * Whether the table keeps the body: only where work may have to be sent again from it (a
   * failed send, a parked or failed record, a retried lease). Otherwise the body lives in the
   * work message until the work is done, and in the DLQ for 14 days if it failed.
   */
  readonly bodyKept: boolean;
  readonly lastEnqueuedAt?: number;
  readonly leaseUntil?: number;
  /** The last lease's length, in seconds: with a time per destination, the one this record was given. */
  readonly leaseSeconds?: number;
  readonly lastError?: string;
  readonly completedAt?: number;
  readonly result?: unknown;
  /** With `withBody` only: the body as stored, in `bodyEncoding`. */
  readonly body?: string;
  readonly bodyEncoding?: 'utf8' | 'base64';
}

export interface Inspection {
  readonly record: RecordView | null;
  readonly log: readonly Record<string, unknown>[];
  readonly ledger: readonly LedgerEntry[];
}

const DAY_MS = 86_400_000;
/** Ledger hours read at most: effects land after receipt, at the latest after a DLQ redrive. */
const LEDGER_LOOKBACK_MS = 15 * DAY_MS;

function parseResult(result: string | undefined): unknown {
  if (result === undefined) return undefined;
  try {
    return JSON.parse(result) as unknown;
  } catch {
    return result;
  }
}

/** Reads one delivery's record, log and ledger entries; `record` is null when there is none. */
export async function inspectDelivery(
  target: Target,
  route: string,
  key: string,
  options: { withBody?: boolean; now?: number } = {},
): Promise<Inspection> {
  const doc = documentClient(target.dynamo);
  const now = options.now ?? Date.now();
  const pk = recordPk(route, key);
  const [item, logItems] = await Promise.all([
    doc.send(new GetCommand({ TableName: target.eventsTable, Key: { pk, sk: RECORD_SK }, ConsistentRead: true })),
    readLogItems(doc, target.eventsTable, route, key),
  ]);
  let record: RecordView | null = null;
  if (item.Item !== undefined) {
    const r = fromRecordItem(item.Item);
    record = {
      route: r.route,
      key: r.key,
      status: r.status,
      hits: r.hits,
      attempts: r.attempts,
      runs: r.runs,
      redrives: r.redrives,
      deferrals: r.deferrals ?? 0,
      ...((r.deferrals ?? 0) > 0 && r.status === 'RECEIVED' && r.lastEnqueuedAt !== undefined && r.lastEnqueuedAt > now ? { waitingUntil: r.lastEnqueuedAt } : {}),
      receivedAt: r.receivedAt,
      expiresAt: r.expiresAt,
      answerStatus: r.answer.status,
      fingerprint: r.fingerprint,
      bodyBytes: r.bodyBytes ?? (r.body === undefined ? 0 : Buffer.byteLength(r.body, r.bodyEncoding === 'base64' ? 'base64' : 'utf8')),
      bodyKept: r.body !== undefined,
      ...(r.lastEnqueuedAt === undefined ? {} : { lastEnqueuedAt: r.lastEnqueuedAt }),
      ...(r.leaseUntil === undefined ? {} : { leaseUntil: r.leaseUntil }),
      ...(r.leaseSeconds === undefined ? {} : { leaseSeconds: r.leaseSeconds }),
      ...(r.lastError === undefined ? {} : { lastError: r.lastError }),
      ...(r.completedAt === undefined ? {} : { completedAt: r.completedAt }),
      ...(r.result === undefined ? {} : { result: parseResult(r.result) }),
      ...(options.withBody === true && r.body !== undefined ? { body: r.body, bodyEncoding: r.bodyEncoding ?? 'utf8' } : {}),
    };
  }
  // Keys and bookkeeping of the table are not part of the entry.
  const hidden: ReadonlySet<string> = new Set(['pk', 'sk', 'route', 'key', 'expiresAt']);
  // Every attempt: the completing one is on the record, the others and the repairs are log items.
  const log = historyOf(logItems, item.Item).map((item) => Object.fromEntries(Object.entries(item).filter(([name]) => !hidden.has(name))));
  const from = Math.max((record?.receivedAt ?? now - DAY_MS) - 60_000, now - LEDGER_LOOKBACK_MS);
  const entries = (await ledgerWindow(target, from, now + 60_000)) ?? [];
  const ledger = entries.filter((e) => e.route === route && e.idempotencyKey === key);
  return { record, log, ledger };
}
