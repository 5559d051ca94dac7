/**
 * The executor's writes on the events table. The claim is the DynamoDB form of
 * `SELECT ... FOR UPDATE SKIP LOCKED`: one conditional update that takes a lease, or
 * returns the record that stood in the way.
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { RECORD_SK, RECORD_STATUS, recordPk } from '../domain/event-record.ts';
import type { EventRecord } from '../domain/event-record.ts';
import type {
  ClaimRequest,
  ExecutionLogEntry,
  ExecutionStore,
  ExecutorClaim,
  FencedWrite,
  ParkResult,
} from '../ports/execution-store.ts';
import { EVENTS_TABLE } from './table-schema.ts';
import { ROUTE_STATE_SK, routeStatePk } from './dynamodb-route-state-store.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { fromRecordItem } from './record-item.ts';

const NAMES = { '#status': 'status' } as const;

/** Partition of the sparse `parked` index that holds a route's parked records. */
export function parkedPartition(route: string): string {
  return `PARKED#${route}`;
}

/** Sort key of a log entry: grouped by record generation, then in time order. */
export function logSortKey(entry: Pick<ExecutionLogEntry, 'receivedAt' | 'startedAt' | 'attempt' | 'kind'>): string {
  const pad = (n: number, width: number): string => String(n).padStart(width, '0');
  return `LOG#${pad(entry.receivedAt, 13)}#${pad(entry.startedAt, 13)}#${pad(entry.attempt, 4)}#${entry.kind}`;
}

export class DynamoDbExecutionStore implements ExecutionStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = documentClient(client);
    this.#table = tableName;
  }

  async claim(request: ClaimRequest): Promise<ExecutorClaim> {
    try {
      const out = await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: recordPk(request.route, request.key), sk: RECORD_SK },
          // Claimable: this generation of the key, not expired, and either waiting
          // (RECEIVED, FAILED on a redrive, PARKED on a resume) or EXECUTING under a lease
          // that has run out (its worker died or stalled; a new token fences it out).
          ConditionExpression:
            'receivedAt = :receivedAt AND expiresAt > :nowSeconds AND ' +
            '(#status IN (:received, :failed, :parked) OR (#status = :executing AND leaseUntil <= :now))',
          UpdateExpression:
            'SET #status = :executing, leaseUntil = :leaseUntil, leaseToken = :token, claimedAt = :now ' +
            'ADD attempts :one',
          ExpressionAttributeNames: NAMES,
          ExpressionAttributeValues: {
            ':receivedAt': request.receivedAt,
            ':nowSeconds': Math.floor(request.nowMs / 1000),
            ':now': request.nowMs,
            ':received': RECORD_STATUS.received,
            ':failed': RECORD_STATUS.failed,
            ':parked': RECORD_STATUS.parked,
            ':executing': RECORD_STATUS.executing,
            ':leaseUntil': request.nowMs + request.leaseMs,
            ':token': request.token,
            ':one': 1,
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      if (out.Attributes === undefined) throw new Error('claim returned no record');
      return { kind: 'claimed', record: fromRecordItem(out.Attributes) };
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      if (err.Item === undefined) return { kind: 'missing' };
      const record = fromRecordItem(unmarshall(err.Item));
      if (record.receivedAt !== request.receivedAt || record.expiresAt <= Math.floor(request.nowMs / 1000)) {
        return { kind: 'missing' };
      }
      if (record.status === RECORD_STATUS.completed) return { kind: 'completed', record };
      return { kind: 'locked', record };
    }
  }

  async complete(write: FencedWrite & { readonly result: string }): Promise<boolean> {
    return this.#fenced(write, 'SET #status = :completed, completedAt = :now, #result = :result REMOVE leaseUntil', {
      ':completed': RECORD_STATUS.completed,
      ':result': write.result,
    }, { '#result': 'result' });
  }

  async release(write: FencedWrite & { readonly error: string }): Promise<boolean> {
    return this.#fenced(write, 'SET #status = :received, lastError = :error, lastErrorAt = :now REMOVE leaseUntil, leaseToken', {
      ':received': RECORD_STATUS.received,
      ':error': write.error,
    });
  }

  async fail(write: FencedWrite & { readonly error: string; readonly deadLetterId: string }): Promise<boolean> {
    return this.#fenced(
      write,
      'SET #status = :failed, lastError = :error, lastErrorAt = :now, deadLetterId = :dl REMOVE leaseUntil, leaseToken',
      { ':failed': RECORD_STATUS.failed, ':error': write.error, ':dl': write.deadLetterId },
    );
  }

  async get(route: string, key: string): Promise<EventRecord | undefined> {
    const out = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: recordPk(route, key), sk: RECORD_SK }, ConsistentRead: true }),
    );
    return out.Item === undefined ? undefined : fromRecordItem(out.Item);
  }

  async markDeadLettered(route: string, key: string, deadLetterId: string): Promise<void> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: recordPk(route, key), sk: RECORD_SK },
          ConditionExpression: 'deadLetterId = :dl',
          UpdateExpression: 'SET deadLetteredId = :dl REMOVE deadLetterId',
          ExpressionAttributeValues: { ':dl': deadLetterId },
        }),
      );
    } catch (err) {
      // Already marked by an earlier receive of the same copy: nothing to do.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  async park(request: Omit<ClaimRequest, 'leaseMs' | 'token'>): Promise<ParkResult> {
    const index = EVENTS_TABLE.parkedIndex;
    const key = { pk: recordPk(request.route, request.key), sk: RECORD_SK };
    try {
      await this.#doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              // Park only while the route is still paused: a resume that has already swept
              // the parked index must not leave this record behind.
              ConditionCheck: {
                TableName: this.#table,
                Key: { pk: routeStatePk(request.route), sk: ROUTE_STATE_SK },
                ConditionExpression: '#state = :paused',
                ExpressionAttributeNames: { '#state': 'state' },
                ExpressionAttributeValues: { ':paused': 'paused' },
              },
            },
            {
              Update: {
                TableName: this.#table,
                Key: key,
                ConditionExpression:
                  'receivedAt = :receivedAt AND expiresAt > :nowSeconds AND ' +
                  '(#status IN (:received, :failed) OR (#status = :executing AND leaseUntil <= :now))',
                UpdateExpression:
                  'SET #status = :parked, parkedAt = :now, #gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk REMOVE leaseUntil, leaseToken',
                ExpressionAttributeNames: { ...NAMES, '#gsi2pk': index.partitionKey, '#gsi2sk': index.sortKey },
                ExpressionAttributeValues: {
                  ':receivedAt': request.receivedAt,
                  ':nowSeconds': Math.floor(request.nowMs / 1000),
                  ':now': request.nowMs,
                  ':received': RECORD_STATUS.received,
                  ':failed': RECORD_STATUS.failed,
                  ':executing': RECORD_STATUS.executing,
                  ':parked': RECORD_STATUS.parked,
                  ':gsi2pk': parkedPartition(request.route),
                  ':gsi2sk': `${new Date(request.receivedAt).toISOString()}#${request.key}`,
                },
              },
            },
          ],
        }),
      );
      return { kind: 'parked' };
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      // Rare path: read what stood in the way.
      const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: key, ConsistentRead: true }));
      if (out.Item === undefined) return { kind: 'missing' };
      const record = fromRecordItem(out.Item);
      if (record.receivedAt !== request.receivedAt || record.expiresAt <= Math.floor(request.nowMs / 1000)) return { kind: 'missing' };
      if (record.status === RECORD_STATUS.completed) return { kind: 'completed', record };
      if (record.status === RECORD_STATUS.parked) return { kind: 'already-parked' };
      if (record.status === RECORD_STATUS.executing && (record.leaseUntil ?? 0) > request.nowMs) return { kind: 'locked', record };
      return { kind: 'route-active' };
    }
  }

  async appendLog(entry: ExecutionLogEntry): Promise<void> {
    await this.#doc.send(
      new PutCommand({
        TableName: this.#table,
        Item: { pk: recordPk(entry.route, entry.key), sk: logSortKey(entry), ...entry },
      }),
    );
  }

  /** A write that only lands while this attempt still holds the record. */
  async #fenced(
    write: FencedWrite,
    update: string,
    values: Record<string, unknown>,
    names: Record<string, string> = {},
  ): Promise<boolean> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: recordPk(write.route, write.key), sk: RECORD_SK },
          ConditionExpression: 'leaseToken = :token AND #status = :executing',
          UpdateExpression: update,
          ExpressionAttributeNames: { ...NAMES, ...names },
          ExpressionAttributeValues: { ...values, ':token': write.token, ':executing': RECORD_STATUS.executing, ':now': write.nowMs },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }
}
