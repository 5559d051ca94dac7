/**
 * The reconciler's reads and writes on the events table. A window is read through the
 * byTime GSI: one Query per hour bucket and shard, bounded by the window's instants in
 * the sort key, so no record outside the window is ever read.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RECORD_SK, RECORD_STATUS, hourBucket, recordPk } from '../domain/event-record.ts';
import type { EventRecord, RecordSummary } from '../domain/event-record.ts';
import type { ExecutionLogEntry } from '../ports/execution-store.ts';
import type { ReconcilerStore, WindowPage } from '../ports/reconciler-store.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from './dynamodb-execution-store.ts';
import { fromRecordItem, fromSummaryItem } from './record-item.ts';
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

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = documentClient(client);
    this.#table = tableName;
    this.#log = new DynamoDbExecutionStore(client, tableName);
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

  async markReenqueued(record: RecordSummary, nowMs: number, stuckBeforeMs: number): Promise<boolean> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: recordPk(record.route, record.key), sk: RECORD_SK },
          // Still the same generation and still stuck, and nobody re-sent it since it got
          // stuck: a RECEIVED record not sent since the threshold (a sender's retry re-sends
          // too), or an EXECUTING record whose lease ran out and that was not re-enqueued
          // since. Two reconcilers racing: exactly one wins and sends.
          ConditionExpression:
            'receivedAt = :receivedAt AND (' +
            '(#status = :received AND (attribute_not_exists(lastEnqueuedAt) OR lastEnqueuedAt < :stuckBefore)) OR ' +
            '(#status = :executing AND leaseUntil <= :now AND (attribute_not_exists(reenqueuedAt) OR reenqueuedAt < leaseUntil)))',
          UpdateExpression: 'SET lastEnqueuedAt = :now, reenqueuedAt = :now ADD reenqueues :one',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':receivedAt': record.receivedAt,
            ':stuckBefore': stuckBeforeMs,
            ':received': RECORD_STATUS.received,
            ':executing': RECORD_STATUS.executing,
            ':now': nowMs,
            ':one': 1,
          },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  async unpark(record: RecordSummary, nowMs: number): Promise<boolean> {
    const index = EVENTS_TABLE.parkedIndex;
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: recordPk(record.route, record.key), sk: RECORD_SK },
          ConditionExpression: '#status = :parked AND receivedAt = :receivedAt',
          UpdateExpression: 'SET #status = :received, lastEnqueuedAt = :now, reenqueuedAt = :now REMOVE #gsi2pk, #gsi2sk',
          ExpressionAttributeNames: { '#status': 'status', '#gsi2pk': index.partitionKey, '#gsi2sk': index.sortKey },
          ExpressionAttributeValues: {
            ':parked': RECORD_STATUS.parked,
            ':received': RECORD_STATUS.received,
            ':receivedAt': record.receivedAt,
            ':now': nowMs,
          },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  appendLog(entry: ExecutionLogEntry): Promise<void> {
    return this.#log.appendLog(entry);
  }
}
