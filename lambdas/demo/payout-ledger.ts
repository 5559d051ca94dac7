/**
 * The demo's ledger module, as a user's would be: its default export is the ledger the
 * reconciler reads for the `payout` action (`actions.payout.ledger`).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Ledger } from '../ledger/ledger.ts';
import { demoLedgerTable } from './demo-environment.ts';
import { DynamoDbLedger } from './dynamodb-ledger.ts';

let ledger: Ledger | undefined;
const demo = (): Ledger => (ledger ??= new DynamoDbLedger(new DynamoDBClient({}), demoLedgerTable()));

const payoutLedger: Ledger = {
  post: (entry) => demo().post(entry),
  listWindow: (fromMs, toMs) => demo().listWindow(fromMs, toMs),
  reverse: (entryId, reversal) => demo().reverse(entryId, reversal),
};
export default payoutLedger;
