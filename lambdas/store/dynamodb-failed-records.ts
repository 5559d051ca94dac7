/**
 * A route's FAILED records through the sparse `failed` index: fail and failExhausted write its
 * keys, a redrive removes them, and no other write touches them, so the hot path pays nothing
 * for it and a failure pays one index write. Its partitions are sharded as the byTime index's
 * are (timeShard), so an incident that fails a thousand deliveries a second does not throttle
 * one index partition (DynamoDB Developer Guide, "Best practices for using global secondary
 * indexes": a GSI's write throttling throttles the table's writes too).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EventRecord } from '../domain/event-record.ts';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { FailedRecords, FailedSelection } from '../ports/failed-records.ts';
import { conditionalUpdate } from './conditional-write.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { fromRecordItem } from './record-item.ts';
import { RECORD_SK, recordPk } from './record-keys.ts';
import { clockMargins, failedPartition, keepUntilSeconds, redrive } from './record-transitions.ts';
import { CLOCK_SKEW_SECONDS } from '../config/route-config.ts';
import { EVENTS_TABLE } from './table-schema.ts';

const INDEX = EVENTS_TABLE.failedIndex;

/** The events table has no `failed` index: a table kept from a version before it (existingEventsTable). */
export class FailedIndexMissingError extends Error {
  constructor(table: string, options?: ErrorOptions) {
    super(
      `the events table ${table} has no "${INDEX.name}" index, which a bulk redrive reads: it was created before the index existed; ` +
        'add the index as lambdas/store/table-schema.ts defines it, or redrive through the DLQ (dlq redrive)',
      options,
    );
    this.name = 'FailedIndexMissingError';
  }
}

export class DynamoDbFailedRecords implements FailedRecords {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #stampMarginMs: number;

  constructor(client: DynamoDBClient, tableName: string, clockSkewSeconds: number = CLOCK_SKEW_SECONDS) {
    this.#doc = documentClient(client);
    this.#table = tableName;
    this.#stampMarginMs = clockMargins(clockSkewSeconds).deadLetterStampMs;
  }

  async *listFailed(route: string, selection: FailedSelection): AsyncIterable<readonly EventRecord[]> {
    // The sort key is `<receivedAt ISO>#<key>`: an ISO instant alone sorts before every key of
    // that instant, so BETWEEN since AND until reads [since, until).
    const since = selection.sinceMs === undefined ? undefined : new Date(selection.sinceMs).toISOString();
    const until = selection.untilMs === undefined ? undefined : new Date(selection.untilMs).toISOString();
    const range =
      since !== undefined && until !== undefined
        ? ' AND #sk BETWEEN :since AND :until'
        : since !== undefined
          ? ' AND #sk >= :since'
          : until !== undefined
            ? ' AND #sk < :until'
            : '';
    const filters = ['#status = :failed'];
    if (selection.errorContains !== undefined) filters.push('contains(lastError, :error)');
    if (selection.keyPrefix !== undefined) filters.push('begins_with(pk, :pk)');
    for (let shard = 0; shard < EVENTS_TABLE.timeShards; shard++) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await this.#query(
          new QueryCommand({
            TableName: this.#table,
            IndexName: INDEX.name,
            KeyConditionExpression: `#pk = :partition${range}`,
            FilterExpression: filters.join(' AND '),
            ExpressionAttributeNames: { '#pk': INDEX.partitionKey, '#status': 'status', ...(range === '' ? {} : { '#sk': INDEX.sortKey }) },
            ExpressionAttributeValues: {
              ':partition': failedPartition(route, shard),
              ':failed': RECORD_STATUS.failed,
              ...(since === undefined ? {} : { ':since': since }),
              ...(until === undefined ? {} : { ':until': until }),
              ...(selection.errorContains === undefined ? {} : { ':error': selection.errorContains }),
              ...(selection.keyPrefix === undefined ? {} : { ':pk': recordPk(route, selection.keyPrefix) }),
            },
            ExclusiveStartKey: startKey,
          }),
        );
        startKey = page.LastEvaluatedKey;
        const items = page.Items ?? [];
        if (items.length > 0) yield items.map((item) => fromRecordItem(item));
      } while (startKey !== undefined);
    }
  }

  async #query(command: QueryCommand) {
    try {
      return await this.#doc.send(command);
    } catch (err) {
      // DynamoDB answers a Query on an index the table lacks with a ValidationException.
      if (err instanceof Error && err.name === 'ValidationException' && /specified index/i.test(err.message)) throw new FailedIndexMissingError(this.#table, { cause: err });
      throw err;
    }
  }

  redrivableFrom(record: EventRecord): number {
    // The write holds while lastEnqueuedAt < stampedAtMs - margin; a millisecond past that.
    return (record.lastEnqueuedAt ?? 0) + this.#stampMarginMs + 1;
  }

  async redrive(record: EventRecord, nowMs: number): Promise<boolean> {
    // No dead-letter copy named (a FAILED record always names one): nothing a redrive can consume.
    if (record.deadLetterId === undefined) return false;
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: { pk: recordPk(record.route, record.key), sk: RECORD_SK },
      ...redrive({
        receivedAt: record.receivedAt,
        nowMs,
        deadLetterId: record.deadLetterId,
        stampedAtMs: nowMs,
        keepUntilSeconds: keepUntilSeconds(record.expiresAt, nowMs),
        stampMarginMs: this.#stampMarginMs,
        strandUntilSent: { route: record.route, key: record.key },
      }),
    });
    return out.ok;
  }
}
