/**
 * The orders ledger on DynamoDB: retryproof's DynamoDbLedger (`retryproof/actions`) with one
 * entry per order, in a table laid out as DYNAMODB_LEDGER_LAYOUT (the `LedgerTable` construct
 * of `retryproof`, orders-stack.ts; local-resources.ts locally). orders-ledger.ts makes the one
 * the functions use, from their environment.
 *
 * It keeps retryproof's contract for a ledger (lambdas/ledger/ledger.ts): an entry exists if
 * and only if its order does, because the action books it after the orders API placed the
 * order, under an id derived from the order, so no run books an order twice; and `reverse`
 * undoes exactly that entry's effect, by cancelling its order with the orders API before it
 * marks the entry.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbLedger } from 'retryproof/actions';
import type { CancelOrder } from './cancel-order.ts';
import { orderEntryId } from './order-entry.ts';
import type { NewOrderEntry, OrderEntry, OrdersLedger } from './order-entry.ts';

/** An {@link OrdersLedger}: retryproof's DynamoDB ledger, keyed by order, undoing by cancelling. */
export class DynamoDbOrdersLedger extends DynamoDbLedger<NewOrderEntry> implements OrdersLedger {
  /** `cancelOrder` undoes an order at the orders API: what `reverse` does before it marks the entry. */
  constructor(client: DynamoDBClient, tableName: string, cancelOrder: CancelOrder) {
    super(client, tableName, {
      entryIdOf: (entry) => {
        // An entry without its order would be an entry without its effect: the one thing a ledger must never hold.
        if (typeof entry.orderId !== 'string' || entry.orderId === '') {
          throw new Error('orders ledger: an entry names the order it books; post it once the orders API has placed the order');
        }
        return orderEntryId(entry.orderId);
      },
      undo: async (entry) => {
        if (typeof entry.orderId !== 'string') throw new Error(`orders ledger: entry ${entry.entryId} names no order, so nothing can undo it`);
        await cancelOrder(entry.orderId);
      },
    });
  }

  override listWindow(fromMs: number, toMs: number): AsyncIterable<readonly OrderEntry[]> {
    return super.listWindow(fromMs, toMs) as AsyncIterable<readonly OrderEntry[]>;
  }
}
