/**
 * A {@link Ledger} on one DynamoDB table: one item per entry, keyed by `entryId`, and the
 * `byHour` index (LEDGER_TABLE: the hour an entry was posted, then its instant and id) through
 * which the reconciler reads a window with one Query per hour, page by page, never a Scan and
 * never the whole window at once. The demo's payout ledger is this class, and so is the
 * example app's; a team's own ledger module can be too (`export default new DynamoDbLedger(...)`).
 *
 * Exported from `retryproof/actions`. The table's layout is {@link DYNAMODB_LEDGER_LAYOUT}; the
 * `LedgerTable` construct of `retryproof` creates it, and `WebhookReceiver.grantLedgerTable`
 * grants the executor and the reconciler exactly the calls this class makes.
 */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { hourBucket } from '../domain/event-record.ts';
import { LEDGER_TABLE } from '../store/table-schema.ts';
import { LEDGER_STATUS } from './ledger.ts';
import type { Ledger, LedgerEntry, LedgerPages, NewLedgerEntry, ReverseResult } from './ledger.ts';

/** The ledger table's key schema and index, the same for the CDK table and the local one. */
export const DYNAMODB_LEDGER_LAYOUT = LEDGER_TABLE;

const HOUR_MS = 3_600_000;

/** How a {@link DynamoDbLedger} names, undoes and pages its entries. */
export interface DynamoDbLedgerOptions<N extends NewLedgerEntry> {
  /**
   * The id of a new entry. A deterministic one makes `post` idempotent: a second post of the
   * same entry (the SDK's retry of a put that committed and lost its answer, or a run that
   * books an effect an earlier run booked) returns the entry already there. Two different
   * entries under one id are refused.
   * @default - `<route>/<key>#<attempt>` when the entry carries `attempt` (each run's effect is
   *   its own entry, so a key that took effect twice shows twice), else a random id
   */
  readonly entryIdOf?: (entry: N) => string;
  /**
   * Undoes an entry's effect before `reverse` marks it reversed: cancel what was booked, refund
   * the payment. Undo first, then mark: a run that dies between the two leaves the entry posted, and
   * the next run undoes (idempotently) and marks it.
   * @default - nothing to undo: the entry is the effect (a ledger of record, the demo's payouts)
   */
  readonly undo?: (entry: LedgerEntry & N) => Promise<void>;
  /**
   * Items per Query page, DynamoDB's `Limit`.
   * @default - as many as fit in DynamoDB's 1 MB page
   */
  readonly pageSize?: number;
}

/** A ledger entry as posted: what was given, with its id and status. */
export type PostedEntry<N extends NewLedgerEntry> = N & Pick<LedgerEntry, 'entryId' | 'status'>;

/** A {@link Ledger} on one DynamoDB table laid out as {@link DYNAMODB_LEDGER_LAYOUT}. */
export class DynamoDbLedger<N extends NewLedgerEntry = NewLedgerEntry> implements Ledger {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #options: DynamoDbLedgerOptions<N>;

  constructor(client: DynamoDBClient, tableName: string, options: DynamoDbLedgerOptions<N> = {}) {
    this.#doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.#table = tableName;
    this.#options = options;
  }

  /** Posts an entry once its effect happened; idempotent for an entry id already posted with the same route and key. */
  async post(entry: N, options: { readonly signal?: AbortSignal } = {}): Promise<PostedEntry<N>> {
    const entryId = this.#options.entryIdOf?.(entry) ?? defaultEntryId(entry);
    const posted: PostedEntry<N> = { ...entry, entryId, status: LEDGER_STATUS.posted };
    const layout = DYNAMODB_LEDGER_LAYOUT.byHourIndex;
    try {
      await this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: { ...posted, [layout.partitionKey]: hourBucket(entry.postedAt), [layout.sortKey]: sortKeyOf(entry.postedAt, entryId) },
          ConditionExpression: 'attribute_not_exists(entryId)',
          // The entry there, for a refused put: its own committed first try, or another entry's.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        options.signal === undefined ? {} : { abortSignal: options.signal },
      );
      return posted;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException) || error.Item === undefined) throw error;
      // DynamoDB Local and the service both hand the old item back raw, even to lib-dynamodb.
      const existing = entryOf(unmarshall(error.Item)) as PostedEntry<N>;
      if (existing.route !== entry.route || existing.idempotencyKey !== entry.idempotencyKey) {
        throw new Error(`ledger: entry ${entryId} is posted for ${existing.route}/${existing.idempotencyKey}, not ${entry.route}/${entry.idempotencyKey}`);
      }
      return existing;
    }
  }

  /** Every entry posted in [fromMs, toMs), one Query page at a time over the hours the window touches. */
  async *listWindow(fromMs: number, toMs: number): LedgerPages {
    // Empty, and never a BETWEEN with its bounds the wrong way round (DynamoDB refuses that).
    if (!(fromMs < toMs)) return;
    const layout = DYNAMODB_LEDGER_LAYOUT.byHourIndex;
    const from = new Date(fromMs).toISOString();
    const to = new Date(toMs).toISOString();
    for (let hour = Math.floor(fromMs / HOUR_MS) * HOUR_MS; hour < toMs; hour += HOUR_MS) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await this.#doc.send(
          new QueryCommand({
            TableName: this.#table,
            IndexName: layout.name,
            KeyConditionExpression: '#bucket = :bucket AND #sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#bucket': layout.partitionKey, '#sk': layout.sortKey },
            ExpressionAttributeValues: { ':bucket': hourBucket(hour), ':from': from, ':to': to },
            ExclusiveStartKey: startKey,
            ...(this.#options.pageSize === undefined ? {} : { Limit: this.#options.pageSize }),
          }),
        );
        const entries: LedgerEntry[] = [];
        for (const item of page.Items ?? []) {
          const entry = entryOf(item);
          // BETWEEN is inclusive, and the sort key's instant is to the millisecond: toMs itself is out.
          if (entry.postedAt >= fromMs && entry.postedAt < toMs) entries.push(entry);
        }
        if (entries.length > 0) yield entries;
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
    }
  }

  /**
   * Reverses an entry at most once: undoes its effect (with `undo`), then marks it, on the
   * condition that it is still posted, so two reconcilers racing over it reverse it once.
   */
  async reverse(entryId: string, reversal: { reversalId: string; reason: string; at: number }): Promise<ReverseResult> {
    const undo = this.#options.undo;
    if (undo !== undefined) {
      const { Item: item } = await this.#doc.send(
        new GetCommand({ TableName: this.#table, Key: { [DYNAMODB_LEDGER_LAYOUT.partitionKey]: entryId }, ConsistentRead: true }),
      );
      if (item === undefined) return 'not-found';
      const entry = entryOf(item) as LedgerEntry & N;
      if (entry.status !== LEDGER_STATUS.posted) return 'already-reversed';
      await undo(entry);
    }
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { [DYNAMODB_LEDGER_LAYOUT.partitionKey]: entryId },
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

/** `<route>/<key>#<attempt>`: one entry per run's effect, posted once however often the put is retried. */
function defaultEntryId(entry: NewLedgerEntry): string {
  return entry.attempt === undefined ? randomUUID() : `${entry.route}/${entry.idempotencyKey}#${entry.attempt}`;
}

/** The `byHour` sort key: the instant, then the id, so entries of one millisecond stay apart. */
function sortKeyOf(ms: number, entryId: string): string {
  return `${new Date(ms).toISOString()}#${entryId}`;
}

const INDEX_KEYS: ReadonlySet<string> = new Set([DYNAMODB_LEDGER_LAYOUT.byHourIndex.partitionKey, DYNAMODB_LEDGER_LAYOUT.byHourIndex.sortKey]);

/** An item without its index keys: the entry as the Ledger contract shapes it. */
function entryOf(item: Record<string, unknown>): LedgerEntry {
  return Object.fromEntries(Object.entries(item).filter(([name]) => !INDEX_KEYS.has(name))) as unknown as LedgerEntry;
}
