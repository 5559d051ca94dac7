/** The demo ledger's entries over a window, in posting order. */
import { DynamoDbLedger } from '../../lambdas/demo/dynamodb-ledger.ts';
import type { LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import { CliError } from '../errors.ts';
import type { Target } from '../target.ts';

/** Read a little past both ends, so an entry posted while the command runs still shows. */
export const LEDGER_MARGIN_MS = 5 * 60_000;

export interface LedgerRow {
  readonly entryId: string;
  readonly route: string;
  readonly idempotencyKey: string;
  readonly amount: number;
  readonly currency: string;
  readonly status: 'posted' | 'reversed';
  readonly postedAt: number;
  readonly reversedAt?: number;
  readonly reversalReason?: string;
}

/**
 * Entries posted in the last `windowMs` (plus the margin).
 * @throws CliError when the stack has no demo ledger
 */
export async function listLedger(
  target: Target,
  windowMs: number,
  filter: { route?: string; key?: string; now?: number } = {},
): Promise<LedgerRow[]> {
  if (target.ledgerTable === undefined) throw new CliError(`${target.description} has no demo ledger (demo is off)`);
  const now = filter.now ?? Date.now();
  const entries: readonly LedgerEntry[] = await new DynamoDbLedger(target.dynamo, target.ledgerTable).listWindow(
    now - windowMs - LEDGER_MARGIN_MS,
    now + LEDGER_MARGIN_MS,
  );
  return entries
    .filter((e) => (filter.route === undefined || e.route === filter.route) && (filter.key === undefined || e.idempotencyKey === filter.key))
    .sort((a, b) => a.postedAt - b.postedAt || a.entryId.localeCompare(b.entryId))
    .map((e) => ({
      entryId: e.entryId,
      route: e.route,
      idempotencyKey: e.idempotencyKey,
      amount: e.amount ?? 0,
      currency: e.currency ?? '',
      status: e.status,
      postedAt: e.postedAt,
      ...(e.reversedAt === undefined ? {} : { reversedAt: e.reversedAt }),
      ...(e.reversalReason === undefined ? {} : { reversalReason: e.reversalReason }),
    }));
}
