/**
 * The reconciler's reads and writes on the events table. A window is read through the
 * byTime GSI: one Query per hour bucket and shard, bounded by the window's instants in
 * the sort key, so no record outside the window is ever read. The index keeps only what the
 * lease never changes (so the lease writes no index copy): a completed record is judged from
 * its copy alone, and the few open ones of a page are read whole with one BatchGetItem.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RECORD_STATUS, hourBucket } from '../domain/event-record.ts';
import type { EventRecord, RecordSummary } from '../domain/event-record.ts';
import type { ResendRequest } from '../ports/event-store.ts';
import type { ExecutionLogEntry, RecordRef } from '../ports/execution-store.ts';
import type { ReconcilerStore, WindowPage } from '../ports/reconciler-store.ts';
import { conditionalUpdate } from './conditional-write.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from './dynamodb-execution-store.ts';
import { DynamoDbParkedRecords } from './dynamodb-parked-records.ts';
import { fromRecordItem, fromSummaryItem } from './record-item.ts';
import { RECORD_SK, recordPk } from './record-keys.ts';
import { claimResend, clearStranded, markStranded, strandedPartition } from './record-transitions.ts';
import { EVENTS_TABLE } from './table-schema.ts';

const HOUR_MS = 3_600_000;
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

export class DynamoDbReconcilerStore implements ReconcilerStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #log: DynamoDbExecutionStore;
  readonly #parked: DynamoDbParkedRecords;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = documentClient(client);
    this.#table = tableName;
    this.#log = new DynamoDbExecutionStore(client, tableName);
    this.#parked = new DynamoDbParkedRecords(client, tableName);
  }

  async *readWindow(fromMs: number, toMs: number): AsyncIterable<WindowPage> {
    const index = EVENTS_TABLE.byTimeIndex;
    // gsi1sk starts with the ISO instant: `from <= sk < to` in string order is the window.
    const from = new Date(fromMs).toISOString();
    const to = new Date(toMs).toISOString();
    for (const bucket of bucketsOf(fromMs, toMs)) {
      for (let shard = 0; shard < EVENTS_TABLE.timeShards; shard++) {
        let startKey: Record<string, unknown> | undefined;
        do {
          const page = await this.#doc.send(
            new QueryCommand({
              TableName: this.#table,
              IndexName: index.name,
              KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
              ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
              ExpressionAttributeValues: { ':pk': `T#${bucket}#${shard}`, ':from': from, ':to': to },
              ExclusiveStartKey: startKey,
            }),
          );
          const items = page.Items ?? [];
          const done = items.map(completedFromIndex).filter((r) => r !== undefined);
          const open = await this.#readWhole(items.filter((item) => completedFromIndex(item) === undefined));
          const records = [...done, ...open].filter((r) => r.receivedAt < toMs);
          yield { bucket, shard, records };
          startKey = page.LastEvaluatedKey;
        } while (startKey !== undefined);
      }
    }
  }

  /** The records of some index copies, read whole from the table (all but the payload is used). */
  async #readWhole(copies: readonly Record<string, unknown>[]): Promise<RecordSummary[]> {
    const out: RecordSummary[] = [];
    for (let i = 0; i < copies.length; i += BATCH_GET) {
      let keys: Record<string, unknown>[] = copies.slice(i, i + BATCH_GET).map((c) => ({ pk: c.pk, sk: c.sk }));
      while (keys.length > 0) {
        const page = await this.#doc.send(new BatchGetCommand({ RequestItems: { [this.#table]: { Keys: keys } } }));
        out.push(...(page.Responses?.[this.#table] ?? []).map((item) => fromSummaryItem(item)));
        keys = page.UnprocessedKeys?.[this.#table]?.Keys ?? [];
      }
    }
    return out;
  }

  async getRecord(route: string, key: string): Promise<EventRecord | undefined> {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: { pk: recordPk(route, key), sk: RECORD_SK } }));
    return out.Item === undefined ? undefined : fromRecordItem(out.Item);
  }

  async claimResend(route: string, key: string, request: ResendRequest): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: { pk: recordPk(route, key), sk: RECORD_SK },
      ...claimResend({ ...request, includeFailed: true }),
    });
    return out.ok;
  }

  listParked(route: string): AsyncIterable<readonly EventRecord[]> {
    return this.#parked.listParked(route);
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

  listStranded(route: string): AsyncIterable<readonly EventRecord[]> {
    return this.#parked.listPartition(strandedPartition(route));
  }

  async markStranded(ref: RecordRef): Promise<void> {
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: { pk: recordPk(ref.route, ref.key), sk: RECORD_SK }, ...markStranded(ref) });
  }

  async clearStranded(ref: RecordRef): Promise<void> {
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: { pk: recordPk(ref.route, ref.key), sk: RECORD_SK }, ...clearStranded(ref) });
  }
}
