/** The orders ledger's window as one array: for the example's tests, never for the reconciler. */
import type { OrderEntry, OrdersLedger } from '../../examples/orders-app/src/order-entry.ts';

/** Every entry of the orders ledger posted in [fromMs, toMs), read page by page. */
export async function orderEntries(ledger: Pick<OrdersLedger, 'listWindow'>, fromMs: number, toMs: number): Promise<OrderEntry[]> {
  const entries: OrderEntry[] = [];
  for await (const page of ledger.listWindow(fromMs, toMs)) entries.push(...page);
  return entries;
}
