/**
 * The orders ledger table's layout, shared by the table (orders-stack.ts), the code that
 * reads and writes it (dynamodb-orders-ledger.ts) and the local table (local-resources.ts).
 *
 * One item per entry, keyed by `entryId`. The `byDay` index holds every entry under the UTC
 * day it was posted, sorted by `postedAt` (epoch ms), so the reconciler's 24-hour window
 * is two Queries and never a Scan. One partition a day takes all of that day's writes,
 * which suits an app that places up to some hundreds of orders a second.
 */
export const ORDERS_LEDGER = {
  partitionKey: 'entryId',
  byDay: { name: 'byDay', partitionKey: 'postedDay', sortKey: 'postedAt' },
} as const;

/** The `byDay` partition of an instant: its UTC day, `2026-11-30`. */
export function postedDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
