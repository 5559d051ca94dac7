/**
 * `retryproof/actions`: what an action module and a ledger module are written against.
 * An action module's default export is an {@link Action}; a ledger module's default export
 * is a {@link Ledger}, for instance a {@link DynamoDbLedger} on a table of your own. Both are
 * bundled into the executor at synth. This entry point carries no CDK; only DynamoDbLedger
 * uses the AWS SDK (which the functions bundle anyway), and esbuild leaves it out of a bundle
 * that does not import it.
 */
export type { Action, ActionContext, ActionResult } from './action.ts';
export { PermanentActionError, RetryableActionError } from './action.ts';
export type { Ledger, LedgerEntry, LedgerPages, LedgerStatus, NewLedgerEntry, ReverseResult } from '../ledger/ledger.ts';
export { LEDGER_STATUS, ledgerEntries } from '../ledger/ledger.ts';
export { DYNAMODB_LEDGER_LAYOUT, DynamoDbLedger } from '../ledger/dynamodb-ledger.ts';
export type { DynamoDbLedgerOptions, PostedEntry } from '../ledger/dynamodb-ledger.ts';
