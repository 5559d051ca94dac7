/**
 * The orders ledger: where the orders-app books each order it places, in a DynamoDB table
 * of its own. This module's default export is the `Ledger` that retryproof's reconciler
 * reads for the `placeOrder` action (`actions.placeOrder.ledger`); place-order.ts books
 * through it too. One entry per order, booked after the order exists; a reversal cancels
 * that order with the orders API, then marks the entry (see dynamodb-orders-ledger.ts: retryproof's
 * DynamoDbLedger, keyed by order).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { cancelOrderWithApi } from './cancel-order.ts';
import { DynamoDbOrdersLedger } from './dynamodb-orders-ledger.ts';
import type { OrdersLedger } from './order-entry.ts';
import { ORDERS_ENV, requireEnv } from './orders-environment.ts';

/** The table named by ORDERS_LEDGER_TABLE, through the SDK's default client (the function's region and role), over the orders API at ORDERS_API_URL. */
const ordersLedger: OrdersLedger = new DynamoDbOrdersLedger(
  new DynamoDBClient({}),
  requireEnv(ORDERS_ENV.ledgerTable),
  cancelOrderWithApi(requireEnv(ORDERS_ENV.apiUrl)),
);
export default ordersLedger;
