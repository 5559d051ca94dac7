/**
 * The ledger: the accounting system where an action's effects land. The reconciler reads
 * it to find a key that took effect twice (a worker died after its effect) and reverses
 * the extra entries. The demo implements it on a DynamoDB table
 * (lambdas/demo/dynamodb-ledger.ts); a user supplies their own per action, as the default
 * export of the module named by `actions.<name>.ledger`.
 *
 * The reconciler judges effects by their entries, so a ledger keeps two rules (README, "The
 * contract for your code"; docs/your-code.md):
 * - An entry exists if and only if its effect happened: the action posts it after the effect
 *   (or removes or voids it when the effect fails), with `attempt: ctx.attempt`, and one
 *   effect never has two entries. An entry without its effect is one the reconciler may keep
 *   or reverse in place of the real one.
 * - `reverse` undoes exactly that entry's effect, at most once: the one payment, the one
 *   order the entry names, and nothing the kept entry stands for. Undo first, then mark the
 *   entry, so a crash between the two leaves it posted for the next run to finish.
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
  /**
   * The run that posted it (`ctx.attempt`). Among a key's posted entries the reconciler keeps
   * the one posted by the run that completed the record, so an entry left by an attempt whose
   * effect failed is the one reversed, never the genuine one. @default - unknown: the earliest is kept
   */
  readonly attempt?: number;
}

export interface NewLedgerEntry {
  readonly route: string;
  /** `ctx.key`: see {@link LedgerEntry.idempotencyKey}. */
  readonly idempotencyKey: string;
  readonly amount?: number;
  readonly currency?: string;
  readonly postedAt: number;
  /** `ctx.attempt`: see {@link LedgerEntry.attempt}. */
  readonly attempt?: number;
}

/** A window of entries, page by page: the reconciler holds one page at a time, never the window. */
export type LedgerPages = AsyncIterable<readonly LedgerEntry[]>;

export type ReverseResult = 'reversed' | 'already-reversed' | 'not-found';

export interface Ledger {
  /** Posts an entry: the action's call. On purpose NOT idempotent in the demo: a double execution shows as two entries. */
  post(entry: NewLedgerEntry): Promise<LedgerEntry>;
  /**
   * Every entry posted in [fromMs, toMs), of every route, page by page (an async generator
   * that yields each Query's items, say); entries carry the route and the sender's key. A
   * window holds a day of effects, and the reconciler holds one page at a time: return pages.
   * One array is still accepted (the 0.1 form), for a ledger that only ever holds a few
   * thousand entries a day: the reconciler reads it as one page, and the whole array is
   * held in memory while it does.
   */
  listWindow(fromMs: number, toMs: number): LedgerPages | Promise<readonly LedgerEntry[]>;
  /**
   * Reverses an entry at most once: `reversalId` is deterministic, so two reconcilers
   * racing over one duplicate reverse it once between them.
   */
  reverse(entryId: string, reversal: { reversalId: string; reason: string; at: number }): Promise<ReverseResult>;
}

/**
 * The pages of a `listWindow` answer, whichever form it takes: pages, one array, or a promise
 * of pages (what a wrapper that awaits each call hands back: a tracer, a test's scheduler).
 */
export async function* ledgerPages(answer: LedgerPages | Promise<LedgerPages | readonly LedgerEntry[]>): LedgerPages {
  const pages = await answer;
  if (Array.isArray(pages)) {
    yield pages as readonly LedgerEntry[];
    return;
  }
  yield* pages as LedgerPages;
}

/** Every entry of a window in one array: for people and tests, never for the reconciler. */
export async function ledgerEntries(ledger: Pick<Ledger, 'listWindow'>, fromMs: number, toMs: number): Promise<LedgerEntry[]> {
  const entries: LedgerEntry[] = [];
  for await (const page of ledgerPages(ledger.listWindow(fromMs, toMs))) for (const entry of page) entries.push(entry);
  return entries;
}
