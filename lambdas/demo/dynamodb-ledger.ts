/**
 * The demo ledger: the package's DynamoDbLedger (lambdas/ledger/dynamodb-ledger.ts) on the demo
 * ledger table (RETRYPROOF_LEDGER_TABLE), posting a random entry id per payout, so that a payout
 * made twice shows as two entries for the reconciler to find.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DEMO_ACTION } from '../config/resolve-config.ts';
import { DynamoDbLedger } from '../ledger/dynamodb-ledger.ts';
import type { Ledger } from '../ledger/ledger.ts';

export { DynamoDbLedger };

/** The ledgers of the demo, by action: the demo ledger table read for the `payout` action. */
export function demoLedgers(client: DynamoDBClient, tableName: string): ReadonlyMap<string, Ledger> {
  return new Map([[DEMO_ACTION, new DynamoDbLedger(client, tableName)]]);
}
