/**
 * The actions this deployment can run, by name. Add your own here (README, "Adding your
 * own action"): an action is `(ctx) => Promise<result>`, and routes name it in
 * retryproof.config.ts.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbLedger } from '../ledger/dynamodb-ledger.ts';
import type { Action } from './action.ts';
import type { ActionRegistry } from './action-registry.ts';
import { payoutAction } from './payout.ts';

export function builtInActions(options: { dynamo: DynamoDBClient; ledgerTable: string | undefined }): ActionRegistry {
  const actions = new Map<string, Action>();
  // The demo payout exists only while the demo ledger is deployed.
  if (options.ledgerTable !== undefined && options.ledgerTable !== '') {
    actions.set('payout', payoutAction(new DynamoDbLedger(options.dynamo, options.ledgerTable)));
  }
  return actions;
}
