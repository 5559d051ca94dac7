/**
 * The ledger: the accounting system where effects land. The demo implements it on a
 * DynamoDB table; a user plugs in their own by implementing these three calls.
 */

export const LEDGER_STATUS = { posted: 'posted', reversed: 'reversed' } as const;
export type LedgerStatus = (typeof LEDGER_STATUS)[keyof typeof LEDGER_STATUS];

export interface LedgerEntry {
  readonly entryId: string;
  readonly route: string;
  readonly idempotencyKey: string;
  readonly amount: number;
  readonly currency: string;
  /** Epoch milliseconds. */
  readonly postedAt: number;
  readonly status: LedgerStatus;
  readonly reversedAt?: number;
  readonly reversalId?: string;
  readonly reversalReason?: string;
}

export interface NewLedgerEntry {
  readonly route: string;
  readonly idempotencyKey: string;
  readonly amount: number;
  readonly currency: string;
  readonly postedAt: number;
}

export type ReverseResult = 'reversed' | 'already-reversed' | 'not-found';

export interface Ledger {
  /** Posts an entry. On purpose NOT idempotent in the demo: a double execution shows as two entries. */
  post(entry: NewLedgerEntry): Promise<LedgerEntry>;
  /** Every entry posted in [fromMs, toMs). */
  listWindow(fromMs: number, toMs: number): Promise<readonly LedgerEntry[]>;
  /**
   * Reverses an entry at most once: `reversalId` is deterministic, so two reconcilers
   * racing over one duplicate reverse it once between them.
   */
  reverse(entryId: string, reversal: { reversalId: string; reason: string; at: number }): Promise<ReverseResult>;
}
