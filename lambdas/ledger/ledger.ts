/**
 * The ledger: the accounting system where an action's effects land. The reconciler reads
 * it to find a key that took effect twice (a worker died after its effect) and reverses
 * the extra entries. The demo implements it on a DynamoDB table
 * (lambdas/demo/dynamodb-ledger.ts); a user supplies their own per action, as the default
 * export of the module named by `actions.<name>.ledger`.
 */

export const LEDGER_STATUS = { posted: 'posted', reversed: 'reversed' } as const;
export type LedgerStatus = (typeof LEDGER_STATUS)[keyof typeof LEDGER_STATUS];

export interface LedgerEntry {
  readonly entryId: string;
  /** The route whose action posted it (`ctx.route`). */
  readonly route: string;
  /**
   * The sender's key, as the action got it: `ctx.key`, not `ctx.idempotencyKey` (which is
   * `<route>/<key>`, for downstream APIs). The reconciler matches entries to records by
   * route and this key; an entry it cannot match is reported as an orphan, never reversed.
   */
  readonly idempotencyKey: string;
  /** What the entry moved, when it moved money. */
  readonly amount?: number;
  readonly currency?: string;
  /** Epoch milliseconds. */
  readonly postedAt: number;
  readonly status: LedgerStatus;
  readonly reversedAt?: number;
  readonly reversalId?: string;
  readonly reversalReason?: string;
}

export interface NewLedgerEntry {
  readonly route: string;
  /** `ctx.key`: see {@link LedgerEntry.idempotencyKey}. */
  readonly idempotencyKey: string;
  readonly amount?: number;
  readonly currency?: string;
  readonly postedAt: number;
}

export type ReverseResult = 'reversed' | 'already-reversed' | 'not-found';

export interface Ledger {
  /** Posts an entry: the action's call. On purpose NOT idempotent in the demo: a double execution shows as two entries. */
  post(entry: NewLedgerEntry): Promise<LedgerEntry>;
  /** Every entry posted in [fromMs, toMs), of every route; entries carry the route and the sender's key. */
  listWindow(fromMs: number, toMs: number): Promise<readonly LedgerEntry[]>;
  /**
   * Reverses an entry at most once: `reversalId` is deterministic, so two reconcilers
   * racing over one duplicate reverse it once between them.
   */
  reverse(entryId: string, reversal: { reversalId: string; reason: string; at: number }): Promise<ReverseResult>;
}
