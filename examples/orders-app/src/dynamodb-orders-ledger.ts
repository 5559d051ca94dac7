/**
 * The orders ledger on DynamoDB: one item per entry in a table laid out as ledger-schema.ts
 * says. orders-ledger.ts makes the one the functions use, from their environment.
 */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
// A user writes `from 'retryproof/actions'`; inside this repository the example imports the source.
import { LEDGER_STATUS } from '../../../lambdas/actions/index.ts';
import type { Ledger, LedgerEntry, NewLedgerEntry, ReverseResult } from '../../../lambdas/actions/index.ts';
import { ORDERS_LEDGER, postedDay } from './ledger-schema.ts';

const DAY_MS = 86_400_000;
const { byDay } = ORDERS_LEDGER;

/** A {@link Ledger} on one DynamoDB table laid out as ledger-schema.ts says. */
export class DynamoDbOrdersLedger implements Ledger {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.#table = tableName;
  }

  async post(entry: NewLedgerEntry): Promise<LedgerEntry> {
    const posted: LedgerEntry = { ...entry, entryId: randomUUID(), status: LEDGER_STATUS.posted };
    await this.#doc.send(
      new PutCommand({
        TableName: this.#table,
        Item: { ...posted, [byDay.partitionKey]: postedDay(entry.postedAt) },
        ConditionExpression: 'attribute_not_exists(entryId)',
      }),
    );
    return posted;
  }

  async listWindow(fromMs: number, toMs: number): Promise<readonly LedgerEntry[]> {
    const entries: LedgerEntry[] = [];
    // One Query per UTC day the window touches; BETWEEN is inclusive, and postedAt is whole milliseconds.
    for (let day = Math.floor(fromMs / DAY_MS) * DAY_MS; day < toMs; day += DAY_MS) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await this.#doc.send(
          new QueryCommand({
            TableName: this.#table,
            IndexName: byDay.name,
            KeyConditionExpression: '#day = :day AND #at BETWEEN :from AND :last',
            ExpressionAttributeNames: { '#day': byDay.partitionKey, '#at': byDay.sortKey },
            ExpressionAttributeValues: { ':day': postedDay(day), ':from': fromMs, ':last': toMs - 1 },
            ExclusiveStartKey: startKey,
          }),
        );
        for (const item of page.Items ?? []) entries.push(entryOf(item));
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
    }
    return entries;
  }

  async reverse(entryId: string, reversal: { reversalId: string; reason: string; at: number }): Promise<ReverseResult> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { [ORDERS_LEDGER.partitionKey]: entryId },
          // Only a posted entry turns reversed: a rerun, or a second reconciler racing this
          // one, finds it reversed already and reverses nothing.
          ConditionExpression: 'attribute_exists(entryId) AND #status = :posted',
          UpdateExpression: 'SET #status = :reversed, reversedAt = :at, reversalId = :rid, reversalReason = :reason',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':posted': LEDGER_STATUS.posted,
            ':reversed': LEDGER_STATUS.reversed,
            ':at': reversal.at,
            ':rid': reversal.reversalId,
            ':reason': reversal.reason,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'reversed';
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return error.Item === undefined ? 'not-found' : 'already-reversed';
      throw error;
    }
  }
}

/** An item without its index key: the entry as the Ledger contract shapes it. */
function entryOf(item: Record<string, unknown>): LedgerEntry {
  return Object.fromEntries(Object.entries(item).filter(([name]) => name !== byDay.partitionKey)) as unknown as LedgerEntry;
}
