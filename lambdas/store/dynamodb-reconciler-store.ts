/**
 * The reconciler's reads and writes on the events table. A window is read through the
 * byTime GSI: one Query per hour bucket and shard, bounded by the window's instants in
 * the sort key, so no record outside the window is ever read.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { hourBucket } from '../domain/event-record.ts';
import type { EventRecord } from '../domain/event-record.ts';
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
          const records = (page.Items ?? []).map((item) => fromSummaryItem(item)).filter((r) => r.receivedAt < toMs);
          yield { bucket, shard, records };
          startKey = page.LastEvaluatedKey;
        } while (startKey !== undefined);
      }
    }
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
