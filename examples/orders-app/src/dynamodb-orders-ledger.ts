/**
 * The orders ledger on DynamoDB: one item per order, in a table laid out as ledger-schema.ts
 * says. orders-ledger.ts makes the one the functions use, from their environment.
 *
 * It keeps retryproof's contract for a ledger (lambdas/ledger/ledger.ts): an entry exists if
 * and only if its order does, because the action books it after the orders API placed the
 * order, under an id derived from the order, so no run books an order twice; and `reverse`
 * undoes exactly that entry's effect, by cancelling its order with the orders API.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
// A user writes `from 'retryproof/actions'`; inside this repository the example imports the source.
import { LEDGER_STATUS } from '../../../lambdas/actions/index.ts';
import type { ReverseResult } from '../../../lambdas/actions/index.ts';
import type { CancelOrder } from './cancel-order.ts';
import { ORDERS_LEDGER, postedDay } from './ledger-schema.ts';
import { orderEntryId } from './order-entry.ts';
import type { NewOrderEntry, OrderEntry, OrdersLedger } from './order-entry.ts';

const DAY_MS = 86_400_000;
const { byDay } = ORDERS_LEDGER;

/** An {@link OrdersLedger} on one DynamoDB table laid out as ledger-schema.ts says. */
export class DynamoDbOrdersLedger implements OrdersLedger {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #cancel: CancelOrder;

  /** `cancelOrder` undoes an order at the orders API: what `reverse` does before it marks the entry. */
  constructor(client: DynamoDBClient, tableName: string, cancelOrder: CancelOrder) {
    this.#doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.#table = tableName;
    this.#cancel = cancelOrder;
  }

  async post(entry: NewOrderEntry, options: { readonly signal?: AbortSignal } = {}): Promise<OrderEntry> {
    // An entry without its order would be an entry without its effect: the one thing a ledger must never hold.
    if (typeof entry.orderId !== 'string' || entry.orderId === '') {
      throw new Error('orders ledger: an entry names the order it books; post it once the orders API has placed the order');
    }
    const booked: OrderEntry = { ...entry, entryId: orderEntryId(entry.orderId), status: LEDGER_STATUS.posted };
    try {
      await this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: { ...booked, [byDay.partitionKey]: postedDay(entry.postedAt) },
          ConditionExpression: 'attribute_not_exists(entryId)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        options.signal === undefined ? {} : { abortSignal: options.signal },
      );
      return booked;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException) || error.Item === undefined) throw error;
      // The order is booked already: by an earlier run that died before its completion, or by
      // this very write, committed, its answer lost and the SDK's retry refused.
      const existing = entryOf(unmarshall(error.Item));
      if (existing.route !== entry.route || existing.idempotencyKey !== entry.idempotencyKey) {
        throw new Error(
          `orders ledger: order ${entry.orderId} is booked for ${existing.route}/${existing.idempotencyKey}, not ${entry.route}/${entry.idempotencyKey}`,
        );
      }
      return existing;
    }
  }

  /** One Query page at a time, one Query per UTC day the window touches: a day of orders is never held whole. */
  async *listWindow(fromMs: number, toMs: number): AsyncIterable<readonly OrderEntry[]> {
    // BETWEEN is inclusive, and postedAt is whole milliseconds.
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
        const entries = (page.Items ?? []).map(entryOf);
        if (entries.length > 0) yield entries;
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
    }
  }

  /**
   * Cancels the entry's order, then marks the entry reversed. In that order: a run that dies
   * between the two leaves the entry posted, so the next run cancels again (the API answers a
   * cancelled order 200) and marks it; the other order would leave a standing order behind an
   * entry that says reversed. The mark is conditional, so two reconcilers reverse it once.
   */
  async reverse(entryId: string, reversal: { reversalId: string; reason: string; at: number }): Promise<ReverseResult> {
    const { Item: item } = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { [ORDERS_LEDGER.partitionKey]: entryId }, ConsistentRead: true }),
    );
    if (item === undefined) return 'not-found';
    const entry = entryOf(item);
    if (entry.status !== LEDGER_STATUS.posted) return 'already-reversed';
    if (typeof entry.orderId !== 'string') throw new Error(`orders ledger: entry ${entryId} names no order, so nothing can undo it`);
    await this.#cancel(entry.orderId);
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { [ORDERS_LEDGER.partitionKey]: entryId },
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
        }),
      );
      return 'reversed';
    } catch (error) {
      // Another reconciler cancelled the same order and marked the entry first.
      if (error instanceof ConditionalCheckFailedException) return 'already-reversed';
      throw error;
    }
  }
}

/** An item without its index key: the entry as the Ledger contract shapes it. */
function entryOf(item: Record<string, unknown>): OrderEntry {
  return Object.fromEntries(Object.entries(item).filter(([name]) => name !== byDay.partitionKey)) as unknown as OrderEntry;
}
