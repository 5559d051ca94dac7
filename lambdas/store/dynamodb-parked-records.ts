/**
 * A route's parked records through the sparse `parked` index: only PARKED records carry its
 * keys, so a route's whole backlog of any age is one Query away, never a Scan.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EventRecord } from '../domain/event-record.ts';
import type { RecordRef } from '../ports/execution-store.ts';
import type { ParkedRecords } from '../ports/parked-records.ts';
import { conditionalUpdate } from './conditional-write.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { fromRecordItem } from './record-item.ts';
import { RECORD_SK, recordPk } from './record-keys.ts';
import { keepParked, parkedPartition, unpark } from './record-transitions.ts';
import { indexPartitionPages } from './index-partition.ts';
import { EVENTS_TABLE } from './table-schema.ts';

export class DynamoDbParkedRecords implements ParkedRecords {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = documentClient(client);
    this.#table = tableName;
  }

  listParked(route: string): AsyncIterable<readonly EventRecord[]> {
    return this.listPartition(parkedPartition(route));
  }

  /** Every record of one partition of the sparse index, page by page. */
  async *listPartition(partition: string): AsyncIterable<readonly EventRecord[]> {
    for await (const page of indexPartitionPages(this.#doc, this.#table, EVENTS_TABLE.parkedIndex, partition)) yield page.items.map((item) => fromRecordItem(item));
  }

  async unpark(ref: RecordRef, nowMs: number): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: { pk: recordPk(ref.route, ref.key), sk: RECORD_SK },
      ...unpark({ receivedAt: ref.receivedAt, nowMs }),
    });
    return out.ok;
  }

  async keepParked(ref: RecordRef, nowMs: number, ttlSeconds: number, beforeSeconds: number): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: { pk: recordPk(ref.route, ref.key), sk: RECORD_SK },
      ...keepParked({ receivedAt: ref.receivedAt, nowMs, ttlSeconds, beforeSeconds }),
    });
    return out.ok;
  }
}
