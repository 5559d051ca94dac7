/**
 * The events table on DynamoDB. It only makes SDK calls; the decisions live in the use
 * cases. A failed condition comes back as data (the old item), never as a thrown error.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { EventRecord, StoredAnswer } from '../domain/event-record.ts';
import { RECORD_SK, recordPk } from '../domain/event-record.ts';
import type { ClaimResult, DuplicateUpdate, IngestEventStore } from '../ports/event-store.ts';
import { fromRecordItem, toRecordItem } from './record-item.ts';

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

  async claim(record: EventRecord, nowMs: number): Promise<ClaimResult> {
    try {
      await this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: toRecordItem(record),
          // First writer wins. An expired record counts as absent: TTL deletion lags by up
          // to two days, so the expiry is compared here rather than trusted to be gone.
          //   t0 claim A ok | t1 claim A fails, old A returned | ... | expiresAt | claim A ok again
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :nowSeconds',
          ExpressionAttributeValues: { ':nowSeconds': Math.floor(nowMs / 1000) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'created' };
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException && err.Item !== undefined) {
        // The old item comes back as raw attribute values even through the document client.
        return { kind: 'exists', record: fromRecordItem(unmarshall(err.Item)) };
      }
      throw err;
    }
  }

  async recordDuplicate(route: string, key: string, update: DuplicateUpdate): Promise<number | undefined> {
    const sets = ['lastSeenAt = :now'];
    const values: Record<string, unknown> = { ':one': 1, ':now': update.nowMs };
    if (update.resentAt !== undefined) {
      sets.push('lastEnqueuedAt = :resentAt');
      values[':resentAt'] = update.resentAt;
    }
    if (update.answer !== undefined) {
      sets.push('answerStatus = :answerStatus', 'answerBody = :answerBody');
      values[':answerStatus'] = update.answer.status;
      values[':answerBody'] = update.answer.body;
    }
    try {
      const out = await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: recordPk(route, key), sk: RECORD_SK },
          // attribute_exists: an update must never create a half record if TTL removed it.
          ConditionExpression: 'attribute_exists(pk)',
          UpdateExpression: `SET ${sets.join(', ')} ADD hits :one`,
          ExpressionAttributeValues: values,
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      const hits: unknown = out.Attributes?.hits;
      return typeof hits === 'number' ? hits : undefined;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
  }

  async recordEnqueueFailure(route: string, key: string, answer: StoredAnswer): Promise<void> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: recordPk(route, key), sk: RECORD_SK },
          ConditionExpression: 'attribute_exists(pk) AND #status = :received',
          UpdateExpression: 'SET answerStatus = :status, answerBody = :body',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':status': answer.status, ':body': answer.body, ':received': 'RECEIVED' },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return;
      throw err;
    }
  }
}
