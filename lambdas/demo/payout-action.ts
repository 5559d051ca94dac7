/**
 * The demo's action module, as a user's would be: its default export is the action. The
 * app names it in `actions.payout.entry` when the demo is on (lib/retryproof-app.ts).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Action } from '../actions/action.ts';
import { demoLedgerTable } from './demo-environment.ts';
import { DynamoDbLedger } from './dynamodb-ledger.ts';
import { payoutAction } from './payout.ts';

let action: Action | undefined;

const payout: Action = (ctx) => {
  action ??= payoutAction(new DynamoDbLedger(new DynamoDBClient({}), demoLedgerTable()));
  return action(ctx);
};
export default payout;
