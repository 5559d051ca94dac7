/** The demo ledger on its own DynamoDB table (RETRYPROOF_LEDGER_TABLE): one item per entry. Demo only. */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEMO_ACTION } from '../config/resolve-config.ts';
import { hourBucket } from '../domain/event-record.ts';
import { documentClient } from '../store/dynamodb-event-store.ts';
import { LEDGER_TABLE } from '../store/table-schema.ts';
import { LEDGER_STATUS } from '../ledger/ledger.ts';
import type { Ledger, LedgerEntry, LedgerPages, NewLedgerEntry, ReverseResult } from '../ledger/ledger.ts';

const HOUR_MS = 3_600_000;

export class DynamoDbLedger implements Ledger {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = documentClient(client);
    this.#table = tableName;
  }

  async post(entry: NewLedgerEntry): Promise<LedgerEntry> {
    const posted: LedgerEntry = { ...entry, entryId: randomUUID(), status: LEDGER_STATUS.posted };
    await this.#doc.send(
      new PutCommand({
        TableName: this.#table,
        Item: {
          ...posted,
          [LEDGER_TABLE.byHourIndex.partitionKey]: hourBucket(entry.postedAt),
          [LEDGER_TABLE.byHourIndex.sortKey]: `${new Date(entry.postedAt).toISOString()}#${posted.entryId}`,
        },
        ConditionExpression: 'attribute_not_exists(entryId)',
      }),
    );
    return posted;
  }

  /** One Query page at a time: a window of a day's effects is never held whole. */
  async *listWindow(fromMs: number, toMs: number): LedgerPages {
    // Empty, and never a BETWEEN with its bounds the wrong way round (DynamoDB refuses that).
    if (!(fromMs < toMs)) return;
    const from = new Date(fromMs).toISOString();
    const to = new Date(toMs).toISOString();
    for (let hour = Math.floor(fromMs / HOUR_MS) * HOUR_MS; hour < toMs; hour += HOUR_MS) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await this.#doc.send(
          new QueryCommand({
            TableName: this.#table,
            IndexName: LEDGER_TABLE.byHourIndex.name,
            KeyConditionExpression: '#bucket = :bucket AND #sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#bucket': LEDGER_TABLE.byHourIndex.partitionKey, '#sk': LEDGER_TABLE.byHourIndex.sortKey },
            ExpressionAttributeValues: { ':bucket': hourBucket(hour), ':from': from, ':to': to },
            ExclusiveStartKey: startKey,
          }),
        );
        const entries: LedgerEntry[] = [];
        for (const item of page.Items ?? []) {
          const entry = item as LedgerEntry;
          if (entry.postedAt >= fromMs && entry.postedAt < toMs) entries.push(stripIndexKeys(item));
        }
        if (entries.length > 0) yield entries;
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
    }
  }

  async reverse(entryId: string, reversal: { reversalId: string; reason: string; at: number }): Promise<ReverseResult> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { entryId },
          // Conditional: a second reverser (a rerun, or a concurrent copy) finds it reversed.
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
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return err.Item === undefined ? 'not-found' : 'already-reversed';
      throw err;
    }
  }
}

const INDEX_KEYS: ReadonlySet<string> = new Set([LEDGER_TABLE.byHourIndex.partitionKey, LEDGER_TABLE.byHourIndex.sortKey]);

function stripIndexKeys(item: Record<string, unknown>): LedgerEntry {
  return Object.fromEntries(Object.entries(item).filter(([name]) => !INDEX_KEYS.has(name))) as unknown as LedgerEntry;
}

/** The ledgers of the demo, by action: the demo ledger table read for the `payout` action. */
export function demoLedgers(client: DynamoDBClient, tableName: string): ReadonlyMap<string, Ledger> {
  return new Map([[DEMO_ACTION, new DynamoDbLedger(client, tableName)]]);
}
