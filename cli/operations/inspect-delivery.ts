/**
 * Everything known about one delivery: its record, its execution log (attempts and
 * reconciler corrections) and its ledger entries. The body is left out unless asked
 * for: operators share this output, and bodies carry customer data.
 *
 * A large body (the S3 claim check) lives in the receiver's bucket: a record that keeps its payload
 * keeps only the object's pointer then, and one that keeps none still names it, by its route, key
 * and fingerprint (domain/body-object.ts). With the body asked for, the object is read back.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { historyOf, readLogItems } from '../../lambdas/store/execution-history.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import type { LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { fromRecordItem } from '../../lambdas/store/record-item.ts';
import type { Target } from '../target.ts';
import { ledgerWindow } from './ledger-entries.ts';
import { bodyObjectName, bodyObjectPointer } from '../../lambdas/domain/body-object.ts';
import { S3BodyObjects } from '../../lambdas/store/s3-body-objects.ts';

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
  /**
   * Set while it is PARKED in its entity's line (a route with `orderBy`), behind an earlier
   * delivery: the place it holds (not set on work parked by a pause).
   */
  readonly waitingTurn?: number;
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
  /**
   * `s3://<bucket>/<name>` of the body's object when the receiver's bucket keeps it: as the record
   * keeps it, or (with `withBody`) found in the target's bucket under the delivery's object name.
   */
  readonly bodyObject?: string;
  /**
   * With `withBody` and a bodyObject: where `body` came from. `bucket`: read back from the object
   * (`body` is then its bytes, base64); `missing`: no object of that name (expired, or never
   * stored); `no-bucket-client`: the target has no client on the bucket (no `body`).
   */
  readonly bodySource?: 'bucket' | 'missing' | 'no-bucket-client';
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

/**
 * The body of a record from the receiver's bucket: at the pointer the record keeps, else, for a
 * record that keeps no payload, at the delivery's object name in the target's bucket when an
 * object is there. A body of at most its route's claimCheckAboveBytes travelled inline and is not
 * looked for: a HEAD of a missing object answers 403, not 404, to a caller without s3:ListBucket
 * (S3 API Reference, HeadObject), and inspect of a small body must not need that permission.
 */
async function bodyFromBucket(
  target: Target,
  record: RecordView,
  kept: string | undefined,
): Promise<Pick<RecordView, 'body' | 'bodyEncoding' | 'bodyObject' | 'bodySource'>> {
  const bodies = target.s3 === undefined || target.bodyBucket === undefined ? undefined : new S3BodyObjects(target.s3, target.bodyBucket);
  let pointer = kept;
  if (pointer === undefined) {
    if (record.bodyKept || bodies === undefined) return {};
    const inline = target.config.routes.find((r) => r.name === record.route)?.claimCheckAboveBytes ?? 0;
    if (record.bodyBytes <= inline) return {};
    const named = bodyObjectPointer(bodies.bucket, bodyObjectName(record.route, record.key, record.fingerprint));
    if ((await bodies.lastWritten(named)) === undefined) return {};
    pointer = named;
  }
  if (bodies === undefined) return { bodyObject: pointer, bodySource: 'no-bucket-client' };
  // The pointer names its own bucket, which may be another Region's: the client reads it there.
  const stored = await bodies.read(pointer);
  if (stored === undefined) return { bodyObject: pointer, bodySource: 'missing' };
  return { bodyObject: pointer, bodySource: 'bucket', body: stored.bytes.toString('base64'), bodyEncoding: 'base64' };
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
      ...(r.status === 'PARKED' && r.waitingTurn !== undefined ? { waitingTurn: r.waitingTurn } : {}),
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
      ...(options.withBody === true && r.body !== undefined && r.bodyObject === undefined ? { body: r.body, bodyEncoding: r.bodyEncoding ?? 'utf8' } : {}),
      ...(r.bodyObject === undefined ? {} : { bodyObject: r.bodyObject }),
    };
    if (options.withBody === true) record = { ...record, ...(await bodyFromBucket(target, record, r.bodyObject)) };
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
