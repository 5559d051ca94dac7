/**
 * Ledger entries over a window, in posting order. Locally they come from the stack, which
 * holds the ledgers of the configuration it was started with (the demo's, or a team's own);
 * on a deployed stack the CLI can read the demo's ledger table only.
 */
import { DynamoDbLedger } from '../../lambdas/demo/dynamodb-ledger.ts';
import { ledgerEntries } from '../../lambdas/ledger/ledger.ts';
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
 * Every entry of the target's ledgers posted in [fromMs, toMs); undefined when it has none
 * the CLI can read.
 * @throws CliError when the local stack refuses the call
 */
export async function ledgerWindow(target: Target, fromMs: number, toMs: number): Promise<readonly LedgerEntry[] | undefined> {
  if (target.localUrl !== undefined) {
    const answer = await fetch(`${target.localUrl}/_local/ledger`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fromMs, toMs }),
    });
    if (!answer.ok) throw new CliError(`the local stack's ledger call answered ${answer.status}: ${await answer.text()}`);
    const { ledgers, entries } = (await answer.json()) as { ledgers: number; entries: LedgerEntry[] };
    return ledgers === 0 ? undefined : entries;
  }
  if (target.ledgerTable === undefined) return undefined;
  return ledgerEntries(new DynamoDbLedger(target.dynamo, target.ledgerTable), fromMs, toMs);
}

/**
 * Entries posted in the last `windowMs` (plus the margin).
 * @throws CliError when the stack has no ledger the CLI can read
 */
export async function listLedger(
  target: Target,
  windowMs: number,
  filter: { route?: string; key?: string; now?: number } = {},
): Promise<LedgerRow[]> {
  const now = filter.now ?? Date.now();
  const entries = await ledgerWindow(target, now - windowMs - LEDGER_MARGIN_MS, now + LEDGER_MARGIN_MS);
  if (entries === undefined) {
    throw new CliError(
      target.localUrl === undefined
        ? `${target.description} has no ledger the CLI can read: its descriptor names none (the demo's ledger table is there only with demo: true)`
        : `${target.description} has no ledger: none of its routes' actions declares one`,
    );
  }
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
