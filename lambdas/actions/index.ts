/**
 * `retryproof/actions`: what an action module and a ledger module are written against.
 * An action module's default export is an {@link Action}; a ledger module's default export
 * is a {@link Ledger}. Both are bundled into the executor at synth, so this entry point
 * carries no AWS SDK and no CDK: importing it costs an action nothing.
 */
export type { Action, ActionContext, ActionResult } from './action.ts';
export { PermanentActionError, RetryableActionError } from './action.ts';
export type { Ledger, LedgerEntry, LedgerPages, LedgerStatus, NewLedgerEntry, ReverseResult } from '../ledger/ledger.ts';
export { LEDGER_STATUS, ledgerEntries } from '../ledger/ledger.ts';
