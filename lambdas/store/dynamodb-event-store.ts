/**
 * The events table on DynamoDB, as ingest sees it. It only makes SDK calls; the
 * conditions live in record-transitions.ts and the decisions in the use case.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EventRecord, Payload, StoredAnswer } from '../domain/event-record.ts';
import type { ClaimResult, IngestEventStore, ResendRequest } from '../ports/event-store.ts';
import { conditionalPut, conditionalUpdate } from './conditional-write.ts';
import { fromRecordItem, toRecordItem } from './record-item.ts';
import { RECORD_SK, recordPk } from './record-keys.ts';
import { claimExpiredKey, claimKey, claimResend, keepPayload, markBreakerTripped, recordEnqueueFailure } from './record-transitions.ts';

/** A document client that leaves `undefined` attributes out instead of failing. */
export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

export class DynamoDbEventStore implements IngestEventStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = documentClient(client);
    this.#table = tableName;
  }

  #key(route: string, key: string): Record<string, string> {
    return { pk: recordPk(route, key), sk: RECORD_SK };
  }

  async claimKey(record: EventRecord, nowMs: number): Promise<ClaimResult> {
    const item = toRecordItem(record);
    // Two rounds at most, unless deliveries keep replacing the same expired key under us.
    for (let round = 0; round < 3; round++) {
      const out = await conditionalUpdate(this.#doc, {
        TableName: this.#table,
        Key: this.#key(record.route, record.key),
        ...claimKey({ item, nowMs }),
        ReturnValues: 'ALL_OLD',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      if (out.ok) return out.item === undefined ? { kind: 'created' } : { kind: 'exists', record: fromRecordItem(out.item) };
      if (out.old === undefined) throw new Error('claimKey failed its condition but returned no record');
      const old = fromRecordItem(out.old);
      // Refused by a live record: it has another body (the caller answers 422).
      if (old.expiresAt > Math.floor(nowMs / 1000)) return { kind: 'exists', record: old };
      // Refused by an expired record: start a new generation over it.
      const put = await conditionalPut(this.#doc, { TableName: this.#table, Item: item, ...claimExpiredKey(nowMs) });
      if (put.ok) return { kind: 'created' };
      // Another delivery started the new generation first: this one is its duplicate.
    }
    throw new Error(`claimKey could not claim ${record.route}/${record.key}: its expired record kept being replaced`);
  }

  async markBreakerTripped(route: string, key: string, receivedAt: number, nowMs: number): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: this.#key(route, key),
      ...markBreakerTripped({ receivedAt, nowMs }),
    });
    return out.ok;
  }

  async claimResend(route: string, key: string, request: ResendRequest): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: this.#key(route, key),
      ...claimResend({ ...request, includeFailed: false }),
    });
    return out.ok;
  }

  async recordEnqueueFailure(route: string, key: string, receivedAt: number, answer: StoredAnswer, payload: Payload): Promise<void> {
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: this.#key(route, key), ...recordEnqueueFailure({ receivedAt, answer, payload }) });
  }

  async keepPayload(route: string, key: string, receivedAt: number, payload: Payload): Promise<void> {
    // Refused: a worker took the record (its message existed), or the payload is kept already.
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: this.#key(route, key), ...keepPayload({ receivedAt, payload }) });
  }
}
