/**
 * The newest deliveries first, a page at a time, read through the byTime index (never a Scan).
 * An hour bucket's shards are each read newest first and merged; only the records still open
 * are read whole (BatchGetItem, without the body), since the index copy of a completed record
 * says all a list needs. Filters on route and key prefix use the index's sort key
 * (<receivedAt ISO>#<route>#<key>); status and error text need the open records' items.
 *
 * A page ends on its last row's sort key; the next page reads strictly below it, so a page is
 * exact whatever arrives meanwhile. One route's FAILED ones come from the sparse failed index. A filter that matches little reads at most `readBudget`
 * index copies a page, and then ends the page early with a cursor to go on from.
 */
import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RECORD_STATUS, hourBucket } from '../../lambdas/domain/event-record.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { fromSummaryItem } from '../../lambdas/store/record-item.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';
import type { Target } from '../target.ts';

const HOUR_MS = 3_600_000;

export interface DeliveryFilter {
  readonly route?: string;
  /** RECEIVED, EXECUTING, COMPLETED, FAILED or PARKED. */
  readonly status?: string;
  /** Received at or after (epoch ms). */
  readonly sinceMs: number;
  /** Received before (epoch ms). */
  readonly untilMs: number;
  readonly keyPrefix?: string;
  /** The last error holds this text (case-sensitive). */
  readonly errorContains?: string;
}

export interface DeliveryRow {
  readonly route: string;
  readonly key: string;
  readonly receivedAt: number;
  readonly status: string;
  readonly attempts?: number;
  readonly lastError?: string;
  readonly completedAt?: number;
}

export interface DeliveryPage {
  readonly rows: readonly DeliveryRow[];
  /** Where the next page starts (exclusive): a byTime sort key. Undefined when the range is read to its start. */
  readonly next?: string;
  /** Index copies read for this page. */
  readonly read: number;
}

export interface PageOptions {
  readonly limit: number;
  /** The previous page's `next`. */
  readonly after?: string;
  /** @default 4000 */
  readonly readBudget?: number;
}

interface IndexCopy {
  readonly sk: string;
  readonly route: string;
  readonly key: string;
  readonly receivedAt: number;
  readonly completedAt?: number;
}

/** A byTime copy's route, key and instant, from its sort key (a route name has no '#'). */
function copyOf(item: Record<string, unknown>): IndexCopy {
  const sk = String(item[EVENTS_TABLE.byTimeIndex.sortKey]);
  const rest = sk.slice(25);
  const cut = rest.indexOf('#');
  return {
    sk,
    route: rest.slice(0, cut),
    key: rest.slice(cut + 1),
    receivedAt: Date.parse(sk.slice(0, 24)),
    ...(typeof item.completedAt === 'number' ? { completedAt: item.completedAt } : {}),
  };
}

/** One shard of one hour, newest first, in [lower, upper]; `more` when the Limit cut it. */
async function readShard(doc: DynamoDBDocumentClient, table: string, pk: string, lower: string, upper: string, limit: number) {
  const index = EVENTS_TABLE.byTimeIndex;
  const out = await doc.send(
    new QueryCommand({
      TableName: table,
      IndexName: index.name,
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
      ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
      ExpressionAttributeValues: { ':pk': pk, ':lower': lower, ':upper': upper },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return { copies: (out.Items ?? []).map(copyOf), more: out.LastEvaluatedKey !== undefined };
}

/** A record's item (whole, or its summary attributes) as a row. */
function rowOf(item: Record<string, unknown>): DeliveryRow {
  const r = fromSummaryItem(item);
  return { route: r.route, key: r.key, receivedAt: r.receivedAt, status: r.status, attempts: r.attempts, ...(r.lastError === undefined ? {} : { lastError: r.lastError }), ...(r.completedAt === undefined ? {} : { completedAt: r.completedAt }) };
}

/** The open records of some copies, read whole but for the payload. */
async function openRecords(doc: DynamoDBDocumentClient, table: string, copies: readonly IndexCopy[]): Promise<Map<string, DeliveryRow>> {
  const found = new Map<string, DeliveryRow>();
  for (let i = 0; i < copies.length; i += 100) {
    let keys: Record<string, unknown>[] = copies.slice(i, i + 100).map((c) => ({ pk: recordPk(c.route, c.key), sk: RECORD_SK }));
    while (keys.length > 0) {
      const out = await doc.send(
        new BatchGetCommand({
          RequestItems: {
            [table]: {
              Keys: keys,
              ProjectionExpression: '#r, #k, #s, fingerprint, receivedAt, expiresAt, attempts, lastError, completedAt',
              ExpressionAttributeNames: { '#r': 'route', '#k': 'key', '#s': 'status' },
            },
          },
        }),
      );
      for (const item of out.Responses?.[table] ?? []) {
        const r = rowOf(item);
        found.set(recordPk(r.route, r.key), r);
      }
      keys = out.UnprocessedKeys?.[table]?.Keys ?? [];
    }
  }
  return found;
}

function keptByIndex(c: IndexCopy, f: DeliveryFilter): boolean {
  if (f.route !== undefined && c.route !== f.route) return false;
  if (f.keyPrefix !== undefined && !c.key.startsWith(f.keyPrefix)) return false;
  // A completed copy is known from the index alone: it matches no other status, and no error text.
  if (c.completedAt !== undefined && ((f.status !== undefined && f.status !== RECORD_STATUS.completed) || f.errorContains !== undefined)) return false;
  return true;
}

function keptByRecord(r: DeliveryRow, f: DeliveryFilter): boolean {
  if (f.status !== undefined && r.status !== f.status) return false;
  return f.errorContains === undefined || (r.lastError ?? '').includes(f.errorContains);
}

/** The rows of some copies that pass the filter, newest first: open records read whole. */
async function rowsOf(doc: DynamoDBDocumentClient, table: string, copies: readonly IndexCopy[], f: DeliveryFilter): Promise<DeliveryRow[]> {
  const candidates = copies.filter((c) => keptByIndex(c, f));
  const open = await openRecords(doc, table, candidates.filter((c) => c.completedAt === undefined));
  return candidates.flatMap((c) => {
    if (c.completedAt !== undefined) return [{ route: c.route, key: c.key, receivedAt: c.receivedAt, status: RECORD_STATUS.completed, completedAt: c.completedAt }];
    const r = open.get(recordPk(c.route, c.key));
    return r !== undefined && keptByRecord(r, f) ? [r] : [];
  });
}

/** Hours read together: an hour with few deliveries costs one round of Queries with its neighbours, not one of its own. */
const HOURS_TOGETHER = 6;

/** A FAILED record as a row, if the filter's key prefix and error text keep it. */
function failedRowOf(item: Record<string, unknown>, f: DeliveryFilter): DeliveryRow | undefined {
  const r = rowOf(item);
  if (f.keyPrefix !== undefined && !r.key.startsWith(f.keyPrefix)) return undefined;
  return f.errorContains === undefined || (r.lastError ?? '').includes(f.errorContains) ? r : undefined;
}

/** One shard of a route's failed partition, newest first, below `upper`: up to `want` rows the filter keeps, within `budget` reads. */
async function failedShard(doc: DynamoDBDocumentClient, table: string, pk: string, range: { lower: string; upper: string }, f: DeliveryFilter, want: number, budget: number) {
  const index = EVENTS_TABLE.failedIndex;
  const rows: { sk: string; row: DeliveryRow }[] = [];
  let start: Record<string, unknown> | undefined;
  let read = 0;
  let lastSk = range.upper;
  do {
    const out = await doc.send(
      new QueryCommand({
        TableName: table, IndexName: index.name, ScanIndexForward: false, Limit: want, ExclusiveStartKey: start,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
        ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
        ExpressionAttributeValues: { ':pk': pk, ':lower': range.lower, ':upper': range.upper },
      }),
    );
    for (const item of out.Items ?? []) {
      read++;
      const sk = String(item[index.sortKey]);
      lastSk = sk;
      const row = sk < range.upper ? failedRowOf(item, f) : undefined;
      if (row !== undefined) rows.push({ sk, row });
    }
    start = out.LastEvaluatedKey;
  } while (start !== undefined && rows.length < want && read < budget);
  return { rows, more: start !== undefined, read, lastSk };
}

/**
 * One route's FAILED records, newest first, through the sparse failed index (whole records, and
 * nothing but FAILED ones): a day of other work costs no read. The page's cursor is a byTime
 * sort key as the other pages' are; its failed-index form drops the route.
 */
async function recentFailed(doc: DynamoDBDocumentClient, table: string, f: DeliveryFilter & { route: string }, options: PageOptions): Promise<DeliveryPage> {
  const after = options.after;
  const upper = after === undefined ? `${new Date(f.untilMs - 1).toISOString()}\uffff` : `${after.slice(0, 24)}#${after.slice(25 + f.route.length + 1)}`;
  const range = { lower: new Date(f.sinceMs).toISOString(), upper };
  const want = options.limit + 1;
  const shards = await Promise.all(
    Array.from({ length: EVENTS_TABLE.timeShards }, (_, s) => failedShard(doc, table, `FAILED#${f.route}#${s}`, range, f, want, Math.ceil((options.readBudget ?? 4000) / EVENTS_TABLE.timeShards))),
  );
  // Exact across shards: nothing below a cut shard's last read copy is taken before that shard reads on.
  const cut = shards.filter((s) => s.more).map((s) => s.lastSk);
  const frontier = cut.length === 0 ? '' : cut.reduce((a, b) => (a > b ? a : b));
  const all = shards.flatMap((s) => s.rows).filter((r) => r.sk >= frontier).sort((a, b) => (a.sk < b.sk ? 1 : -1));
  const rows = all.slice(0, options.limit).map((r) => r.row);
  const read = shards.reduce((n, s) => n + s.read, 0);
  const last = rows.at(-1);
  const byTime = (sk: string): string => `${sk.slice(0, 24)}#${f.route}#${sk.slice(25)}`;
  if (all.length > options.limit && last !== undefined) return { rows, read, next: `${new Date(last.receivedAt).toISOString()}#${last.route}#${last.key}` };
  return { rows, read, ...(cut.length === 0 ? {} : { next: byTime(frontier) }) };
}

/** One page of deliveries, newest first; see the module's comment. */
export async function recentDeliveries(target: Target, filter: DeliveryFilter, options: PageOptions): Promise<DeliveryPage> {
  const doc = documentClient(target.dynamo);
  const route = filter.route;
  if (filter.status === RECORD_STATUS.failed && route !== undefined) return recentFailed(doc, target.eventsTable, { ...filter, route }, options);
  const budget = options.readBudget ?? 4000;
  const lower = new Date(filter.sinceMs).toISOString();
  let upper = options.after ?? `${new Date(filter.untilMs - 1).toISOString()}\uffff`;
  const rows: DeliveryRow[] = [];
  let read = 0;
  const lowest = Math.floor(filter.sinceMs / HOUR_MS) * HOUR_MS;
  for (let top = Math.floor(Date.parse(upper.slice(0, 24)) / HOUR_MS) * HOUR_MS; top >= lowest; top -= HOURS_TOGETHER * HOUR_MS) {
    const hours = Array.from({ length: HOURS_TOGETHER }, (_, i) => top - i * HOUR_MS).filter((h) => h >= lowest);
    const partitions = hours.flatMap((h) => Array.from({ length: EVENTS_TABLE.timeShards }, (_, s) => `T#${hourBucket(h)}#${s}`));
    for (;;) {
      const shards = await Promise.all(partitions.map((pk) => readShard(doc, target.eventsTable, pk, lower, upper, options.limit + 1)));
      // Every copy at or above the frontier is in hand: each cut partition's last copy is at or below it.
      const cut = shards.filter((s) => s.more).map((s) => s.copies.at(-1)?.sk ?? '');
      const frontier = cut.length === 0 ? '' : cut.reduce((a, b) => (a > b ? a : b));
      const copies = shards.flatMap((s) => s.copies).filter((c) => c.sk < upper && c.sk >= frontier).sort((a, b) => (a.sk < b.sk ? 1 : -1));
      read += copies.length;
      for (const row of await rowsOf(doc, target.eventsTable, copies, filter)) {
        rows.push(row);
        if (rows.length === options.limit) return { rows, next: `${new Date(row.receivedAt).toISOString()}#${row.route}#${row.key}`, read };
      }
      if (cut.length === 0) break;
      upper = frontier;
      if (read >= budget) return { rows, next: upper, read };
    }
    upper = `${new Date(top - (HOURS_TOGETHER - 1) * HOUR_MS - 1).toISOString()}\uffff`;
    if (read >= budget) return { rows, next: upper, read };
  }
  return { rows, read };
}
