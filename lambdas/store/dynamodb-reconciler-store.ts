/**
 * The reconciler's reads and writes on the events table. A window is read through the
 * byTime GSI: one Query per hour bucket and shard, bounded by the window's instants in
 * the sort key, so no record outside the window is ever read. The index keeps only what the
 * lease never changes (so the lease writes no index copy): a completed record is judged from
 * its copy alone, and the few open ones of a page are read whole with one BatchGetItem.
 *
 * Every read can start after a given record: its index keys are the Query's
 * ExclusiveStartKey, exactly the LastEvaluatedKey a page ending on it returns (a GSI's keys
 * and the table's: DynamoDB API Reference, Query, "ExclusiveStartKey" and "LastEvaluatedKey").
 * That is how a run continues where the last one stopped (the cursor item, below).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RECORD_STATUS, hourBucket } from '../domain/event-record.ts';
import type { EventRecord, RecordSummary } from '../domain/event-record.ts';
import type { ResendRequest } from '../ports/event-store.ts';
import type { ExecutionLogEntry, RecordRef } from '../ports/execution-store.ts';
import type { CursorState, CursorTake, ReconcilerStore, WindowKeysPart, WindowPage, WindowStart } from '../ports/reconciler-store.ts';
import { conditionalUpdate, newWriteId } from './conditional-write.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from './dynamodb-execution-store.ts';
import { DynamoDbParkedRecords } from './dynamodb-parked-records.ts';
import { fromRecordItem, fromSummaryItem } from './record-item.ts';
import { RECONCILER_CURSOR_KEY, RECORD_SK, recordPk } from './record-keys.ts';
import { claimResend, clearStranded, markStranded, parkedIndexKeys, parkedPartition, strandedIndexKeys, strandedPartition } from './record-transitions.ts';
import { indexPartitionPages } from './index-partition.ts';
import { CHUNK_HASHES, bytesOf, cursorOf, cursorUpdate, float64sOf, uint32sOf } from './reconciler-items.ts';
import { EVENTS_TABLE } from './table-schema.ts';

const HOUR_MS = 3_600_000;
/**
 * Items a Query page holds at most. A 1 MB page is some 5,000 index copies; the reconciler
 * holds one page while it works through it, awaiting a write per stuck record, so the page's
 * objects outlive the young generation and pile up in the old one between collections. A
 * thousand keep that small. It costs nothing in read units (a Query is metered on the bytes
 * it returns, summed and rounded up to 4 KB once per request: DynamoDB Developer Guide, "DynamoDB
 * read and write operations", capacity unit consumption for Query) and one request per thousand
 * records.
 */
const PAGE_ITEMS = 1_000;
/** BatchGetItem reads at most this many keys a request. */
const BATCH_GET = 100;

/**
 * A completed record as its byTime copy shows it: route and key from pk (EVT#<route>#<key>;
 * a route name has no '#'), receivedAt from the sort key (<ISO instant>#...), and the
 * projected fingerprint, expiry and completion time. Undefined for a record still open.
 */
function completedFromIndex(item: Record<string, unknown>): RecordSummary | undefined {
  const { pk, gsi1sk, fingerprint, expiresAt, completedAt } = item;
  if (typeof completedAt !== 'number' || typeof pk !== 'string' || typeof gsi1sk !== 'string') return undefined;
  if (typeof fingerprint !== 'string' || typeof expiresAt !== 'number') return undefined;
  const scoped = pk.slice('EVT#'.length);
  const cut = scoped.indexOf('#');
  return {
    route: scoped.slice(0, cut),
    key: scoped.slice(cut + 1),
    status: RECORD_STATUS.completed,
    fingerprint,
    receivedAt: Date.parse(gsi1sk.slice(0, 24)),
    expiresAt,
    completedAt,
  };
}

/** The hour buckets a window touches, oldest first. */
export function bucketsOf(fromMs: number, toMs: number): string[] {
  const buckets: string[] = [];
  for (let hour = Math.floor(fromMs / HOUR_MS) * HOUR_MS; hour < toMs; hour += HOUR_MS) buckets.push(hourBucket(hour));
  return buckets;
}

/** The record a page's LastEvaluatedKey (or an index item) points at: route and key from pk, receivedAt from the sort key. */
function refOfIndexKey(key: Record<string, unknown>, sortKey: string): RecordRef {
  const pk = String(key.pk);
  const scoped = pk.slice('EVT#'.length);
  const cut = scoped.indexOf('#');
  return { route: scoped.slice(0, cut), key: scoped.slice(cut + 1), receivedAt: Date.parse(String(key[sortKey]).slice(0, 24)) };
}

/** A record's table key. */
function tableKeyOf(ref: { readonly route: string; readonly key: string }): { pk: string; sk: string } {
  return { pk: recordPk(ref.route, ref.key), sk: RECORD_SK };
}

export class DynamoDbReconcilerStore implements ReconcilerStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #log: DynamoDbExecutionStore;
  readonly #parked: DynamoDbParkedRecords;

  readonly #pageLimit: number;
  readonly #timeShards: number;

  /**
   * @param options.pageLimit items a window or sparse-index Query returns at most. @default PAGE_ITEMS
   * @param options.timeShards the byTime partitions an hour the table's writers use (DynamoDbEventStore).
   *   @default EVENTS_TABLE.timeShards, what a deployment uses
   */
  constructor(client: DynamoDBClient, tableName: string, options: { readonly pageLimit?: number; readonly timeShards?: number } = {}) {
    this.#doc = documentClient(client);
    this.#table = tableName;
    this.#log = new DynamoDbExecutionStore(client, tableName);
    this.#parked = new DynamoDbParkedRecords(client, tableName);
    this.#pageLimit = options.pageLimit ?? PAGE_ITEMS;
    this.#timeShards = options.timeShards ?? EVENTS_TABLE.timeShards;
  }

  async *readWindow(fromMs: number, toMs: number, start?: WindowStart): AsyncIterable<WindowPage> {
    // Empty, never queried: DynamoDB refuses an inverted BETWEEN, and the cursor would hand the error on (seed 618).
    if (!(fromMs < toMs)) return;
    const index = EVENTS_TABLE.byTimeIndex;
    // gsi1sk starts with the ISO instant: `from <= sk < to` in string order is the window.
    const from = new Date(fromMs).toISOString();
    const to = new Date(toMs).toISOString();
    const buckets = bucketsOf(fromMs, toMs);
    const first = start === undefined ? 0 : buckets.indexOf(start.bucket);
    if (first === -1) throw new Error(`window read: bucket ${start?.bucket ?? ''} is not in the window ${from} .. ${to}`);
    for (let b = first; b < buckets.length; b++) {
      const bucket = buckets[b] as string;
      for (let shard = b === first ? (start?.shard ?? 0) : 0; shard < this.#timeShards; shard++) {
        const pk = `T#${bucket}#${shard}`;
        const after = b === first && shard === start?.shard ? start.after : undefined;
        let startKey: Record<string, unknown> | undefined =
          after === undefined
            ? undefined
            : {
                ...tableKeyOf(after),
                [index.partitionKey]: pk,
                [index.sortKey]: `${new Date(after.receivedAt).toISOString()}#${after.route}#${after.key}`,
              };
        do {
          const page = await this.#doc.send(
            new QueryCommand({
              TableName: this.#table,
              IndexName: index.name,
              KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
              ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
              ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
              ExclusiveStartKey: startKey,
              Limit: this.#pageLimit,
            }),
          );
          const records = (await this.#summaries(page.Items ?? [])).filter((r) => r.receivedAt < toMs);
          startKey = page.LastEvaluatedKey;
          const next: WindowStart | undefined =
            startKey !== undefined
              ? { bucket, shard, after: refOfIndexKey(startKey, index.sortKey) }
              : shard + 1 < this.#timeShards
                ? { bucket, shard: shard + 1 }
                : b + 1 < buckets.length
                  ? { bucket: buckets[b + 1] as string, shard: 0 }
                  : undefined;
          yield { bucket, shard, records, next };
        } while (startKey !== undefined);
      }
    }
  }

  /** The summaries of a page of index copies, in the page's order: completed ones from the copy, open ones read whole. */
  async #summaries(items: readonly Record<string, unknown>[]): Promise<RecordSummary[]> {
    const done = items.map(completedFromIndex);
    const open = await this.#readWhole(items.filter((_, i) => done[i] === undefined));
    const byPk = new Map(open.map((r) => [recordPk(r.route, r.key), r]));
    const out: RecordSummary[] = [];
    items.forEach((item, i) => {
      // A record deleted (TTL) between the Query and the read has no whole item: it is gone.
      const record = done[i] ?? byPk.get(String(item.pk));
      if (record !== undefined) out.push(record);
    });
    return out;
  }

  /** The records of some index copies, read whole from the table (all but the payload is used). */
  async #readWhole(copies: readonly Record<string, unknown>[]): Promise<RecordSummary[]> {
    return (await this.#batchGet(copies.map((c) => ({ pk: c.pk, sk: c.sk })))).map((item) => fromSummaryItem(item));
  }

  async #batchGet(allKeys: readonly Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (let i = 0; i < allKeys.length; i += BATCH_GET) {
      let keys: Record<string, unknown>[] = allKeys.slice(i, i + BATCH_GET);
      while (keys.length > 0) {
        const page = await this.#doc.send(new BatchGetCommand({ RequestItems: { [this.#table]: { Keys: keys } } }));
        out.push(...(page.Responses?.[this.#table] ?? []));
        keys = page.UnprocessedKeys?.[this.#table]?.Keys ?? [];
      }
    }
    return out;
  }

  async getRecord(route: string, key: string): Promise<EventRecord | undefined> {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: tableKeyOf({ route, key }) }));
    return out.Item === undefined ? undefined : fromRecordItem(out.Item);
  }

  async getRecords(refs: readonly { readonly route: string; readonly key: string }[]): Promise<EventRecord[]> {
    const keys = [...new Map(refs.map((r) => [recordPk(r.route, r.key), tableKeyOf(r)])).values()];
    return (await this.#batchGet(keys)).map((item) => fromRecordItem(item));
  }

  async claimResend(route: string, key: string, request: ResendRequest): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: { pk: recordPk(route, key), sk: RECORD_SK },
      ...claimResend({ ...request, includeFailed: true }),
    });
    return out.ok;
  }

  listParked(route: string, after?: RecordRef): AsyncIterable<readonly EventRecord[]> {
    return this.#partition(parkedPartition(route), after === undefined ? undefined : { ...tableKeyOf(after), ...parkedIndexKeys(after.route, after.key, after.receivedAt) });
  }

  unpark(ref: RecordRef, nowMs: number): Promise<boolean> {
    return this.#parked.unpark(ref, nowMs);
  }

  keepParked(ref: RecordRef, nowMs: number, ttlSeconds: number, beforeSeconds: number): Promise<boolean> {
    return this.#parked.keepParked(ref, nowMs, ttlSeconds, beforeSeconds);
  }

  appendLog(entry: ExecutionLogEntry): Promise<void> {
    return this.#log.appendLog(entry);
  }

  listStranded(route: string, after?: RecordRef): AsyncIterable<readonly EventRecord[]> {
    return this.#partition(strandedPartition(route), after === undefined ? undefined : { ...tableKeyOf(after), ...strandedIndexKeys(after.route, after.key, after.receivedAt) });
  }

  /** One partition of the sparse index, page by page, from just after the record whose table and index keys are `after`. */
  async *#partition(partition: string, after: Record<string, unknown> | undefined): AsyncIterable<readonly EventRecord[]> {
    const pages = indexPartitionPages(this.#doc, this.#table, EVENTS_TABLE.parkedIndex, partition, { ...(after === undefined ? {} : { startKey: after }), limit: this.#pageLimit });
    for await (const page of pages) yield page.items.map((item) => fromRecordItem(item));
  }

  async markStranded(ref: RecordRef): Promise<void> {
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: { pk: recordPk(ref.route, ref.key), sk: RECORD_SK }, ...markStranded(ref) });
  }

  async clearStranded(ref: RecordRef): Promise<void> {
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: { pk: recordPk(ref.route, ref.key), sk: RECORD_SK }, ...clearStranded(ref) });
  }

  /*
   * The cursor item. Every write is conditional on who holds it, and carries a nonce
   * (writeId, conditional-write.ts) so that the SDK's retry of a write that committed but lost
   * its answer counts as ours. The lease is taken only when free, over (by twice the clock
   * bound: the caller's staleBefore), or ours already (the retry of our own take):
   *   t0 run A takes (holder A, leaseUntil t0+L) | t1 run B: refused, A holds it | t0+L+2skew run C takes over
   */
  async takeCursor(runId: string, leaseUntil: number, staleBefore: number): Promise<CursorTake> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: RECONCILER_CURSOR_KEY,
      ConditionExpression: 'attribute_not_exists(holder) OR holder = :run OR leaseUntil <= :stale',
      UpdateExpression: 'SET holder = :run, leaseUntil = :until, writeId = :writeId',
      ExpressionAttributeValues: { ':run': runId, ':until': leaseUntil, ':stale': staleBefore, ':writeId': newWriteId() },
      // The item as it was: whose lease this take ended, if anyone's.
      ReturnValues: 'ALL_OLD',
    });
    const holder = (out.ok ? out.item : out.old)?.holder;
    const held = typeof holder === 'string' ? holder : undefined;
    if (out.ok) return { taken: true, cursor: cursorOf(out.item), tookOver: held !== undefined && held !== runId };
    return { taken: false, holder: held ?? '', leaseUntil: Number(out.old?.leaseUntil ?? 0) };
  }

  async saveCursor(runId: string, cursor: CursorState, leaseUntil: number): Promise<boolean> {
    const { set, values } = cursorUpdate(cursor);
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: RECONCILER_CURSOR_KEY,
      ConditionExpression: 'holder = :run',
      UpdateExpression: `SET ${set}, leaseUntil = :until`,
      ExpressionAttributeNames: { '#position': 'position' },
      ExpressionAttributeValues: { ...values, ':run': runId, ':until': leaseUntil },
    });
    return out.ok;
  }

  async releaseCursor(runId: string, cursor: CursorState): Promise<boolean> {
    const { set, values } = cursorUpdate(cursor);
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: RECONCILER_CURSOR_KEY,
      ConditionExpression: 'holder = :run',
      UpdateExpression: `SET ${set} REMOVE holder, leaseUntil`,
      ExpressionAttributeNames: { '#position': 'position' },
      ExpressionAttributeValues: { ...values, ':run': runId },
    });
    return out.ok;
  }

  /*
   * Key chunks: pk RECONCILER, sk KEYS#<window>#<run>#<n>, never written twice (a run names
   * its own), gone by TTL once their window is long done. UpdateItem, not PutItem: the
   * function's grant stays what it was.
   */
  async saveKeys(windowId: string, runId: string, part: WindowKeysPart, expiresAt: number): Promise<string[]> {
    const chunks: { route: string; hashes: Float64Array; parts?: Uint32Array }[] = [];
    for (let i = 0; i < part.records.length; i += CHUNK_HASHES) chunks.push({ route: '', hashes: part.records.subarray(i, i + CHUNK_HASHES) });
    for (const [route, done] of part.completed) {
      for (let i = 0; i < done.hashes.length; i += CHUNK_HASHES) {
        chunks.push({ route, hashes: done.hashes.subarray(i, i + CHUNK_HASHES), parts: done.parts.subarray(i, i + CHUNK_HASHES) });
      }
    }
    const names: string[] = [];
    for (const [n, chunk] of chunks.entries()) {
      const sk = `KEYS#${windowId}#${runId}#${n}`;
      await conditionalUpdate(this.#doc, {
        TableName: this.#table,
        Key: { pk: RECONCILER_CURSOR_KEY.pk, sk },
        ConditionExpression: 'attribute_not_exists(pk)',
        UpdateExpression: `SET #route = :route, h = :h, expiresAt = :expiresAt, writeId = :writeId${chunk.parts === undefined ? '' : ', p = :p'}`,
        ExpressionAttributeNames: { '#route': 'route' },
        ExpressionAttributeValues: {
          ':route': chunk.route,
          ':h': bytesOf(chunk.hashes),
          ':expiresAt': expiresAt,
          ':writeId': newWriteId(),
          ...(chunk.parts === undefined ? {} : { ':p': bytesOf(chunk.parts) }),
        },
      });
      names.push(sk);
    }
    return names;
  }

  async *readKeys(chunks: readonly string[]): AsyncIterable<WindowKeysPart> {
    // Ten at a time: a few MB in memory, not a BatchGetItem answer's 16 MB.
    for (let i = 0; i < chunks.length; i += 10) {
      const items = await this.#batchGet(chunks.slice(i, i + 10).map((sk) => ({ pk: RECONCILER_CURSOR_KEY.pk, sk })));
      for (const item of items) {
        const route = typeof item.route === 'string' ? item.route : '';
        const hashes = float64sOf(item.h);
        yield route === ''
          ? { records: hashes, completed: new Map() }
          : { records: new Float64Array(), completed: new Map([[route, { hashes, parts: uint32sOf(item.p) }]]) };
      }
    }
  }
}
