/**
 * The events table on DynamoDB, as ingest sees it. It only makes SDK calls; the
 * conditions live in record-transitions.ts and the decisions in the use case.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EventRecord, StoredAnswer } from '../domain/event-record.ts';
import type { ClaimResult, DuplicateCounts, IngestEventStore, ResendRequest } from '../ports/event-store.ts';
import { conditionalPut, conditionalUpdate } from './conditional-write.ts';
import { fromRecordItem, toRecordItem } from './record-item.ts';
import { RECORD_SK, recordPk } from './record-keys.ts';
import { claimKey, claimResend, countDuplicate, markBreakerTripped, recordEnqueueFailure } from './record-transitions.ts';

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
    const out = await conditionalPut(this.#doc, {
      TableName: this.#table,
      Item: toRecordItem(record),
      ...claimKey(nowMs),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    if (out.ok) return { kind: 'created' };
    if (out.old === undefined) throw new Error('claimKey failed its condition but returned no record');
    return { kind: 'exists', record: fromRecordItem(out.old) };
  }

  async recordDuplicate(route: string, key: string, nowMs: number, options: { readonly repeat: boolean }): Promise<DuplicateCounts | undefined> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: this.#key(route, key),
      ...countDuplicate({ nowMs, repeat: options.repeat }),
      ReturnValues: 'UPDATED_NEW',
    });
    if (!out.ok) return undefined;
    const { hits, repeats } = out.item ?? {};
    if (typeof hits !== 'number') return undefined;
    // A non-repeat leaves `repeats` out of the update, so it is not returned.
    return { hits, repeats: typeof repeats === 'number' ? repeats : undefined };
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

  async recordEnqueueFailure(route: string, key: string, receivedAt: number, answer: StoredAnswer): Promise<void> {
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: this.#key(route, key), ...recordEnqueueFailure({ receivedAt, answer }) });
  }
}
