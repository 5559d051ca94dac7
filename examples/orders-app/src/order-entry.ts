/**
 * What the orders ledger holds: one entry per order the orders API placed, never one per
 * run. The entry names its order (`orderId`), so the entry exists if and only if its order
 * does, and reversing it cancels exactly that order.
 */
import type { Ledger, LedgerEntry, NewLedgerEntry } from 'retryproof/actions';

/** An entry to book: the order the API placed, and the run that placed it or got it back. */
export interface NewOrderEntry extends NewLedgerEntry {
  /** The order the orders API answered with. Only known once the order exists: so the entry is booked after it. */
  readonly orderId: string;
  /** `ctx.attempt`: the run that booked the entry. */
  readonly attempt?: number;
}

/** A booked order. */
export interface OrderEntry extends LedgerEntry {
  readonly orderId: string;
  readonly attempt?: number;
}

/** The orders ledger: a retryproof {@link Ledger} whose entries are orders. */
export interface OrdersLedger extends Ledger {
  /**
   * Books an order, once: a second post of the same order (a rerun that got it back from the
   * API, or the SDK's retry of a write that committed) returns the entry already booked.
   * `signal` aborts the write at the action's deadline.
   * @throws Error when the order's entry books another delivery (an API that gave one order to two keys)
   */
  post(entry: NewOrderEntry, options?: { readonly signal?: AbortSignal }): Promise<OrderEntry>;
  /** The window's entries, page by page. */
  listWindow(fromMs: number, toMs: number): AsyncIterable<readonly OrderEntry[]>;
}

/** The entry id of an order: one entry per order, whoever books it and however often. */
export function orderEntryId(orderId: string): string {
  return `order-${orderId}`;
}
