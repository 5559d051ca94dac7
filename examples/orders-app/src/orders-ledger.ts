/**
 * The orders ledger: where the orders-app books each order it places, in a DynamoDB table
 * of its own. This module's default export is the `Ledger` that retryproof's reconciler
 * reads for the `placeOrder` action (`actions.placeOrder.ledger`): it lists a window of
 * entries, finds a key booked twice (a run that died after its effect, then ran again) and
 * reverses the extra entry here, at most once. place-order.ts books through it too.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Ledger } from '../../../lambdas/actions/index.ts';
import { DynamoDbOrdersLedger } from './dynamodb-orders-ledger.ts';
import { ORDERS_ENV, requireEnv } from './orders-environment.ts';

/** The table named by ORDERS_LEDGER_TABLE, through the SDK's default client: the function's region and role. */
const ordersLedger: Ledger = new DynamoDbOrdersLedger(new DynamoDBClient({}), requireEnv(ORDERS_ENV.ledgerTable));
export default ordersLedger;
