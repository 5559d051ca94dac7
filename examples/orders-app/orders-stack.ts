/**
 * The orders-app on AWS: the app's own ledger table, one retryproof WebhookReceiver over
 * retryproof.config.ts, and what joins them: the receiver's executor and reconciler may use
 * the table, and know its name and the orders API's URL.
 */
import { CfnOutput, Stack } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { LedgerTable, WebhookReceiver } from 'retryproof';
import { config } from './retryproof.config.ts';
import { ORDERS_ENV } from './src/orders-environment.ts';

export interface OrdersStackProps extends StackProps {
  /** The downstream orders API's base URL: the action POSTs each order to its `/orders`. */
  readonly ordersApiUrl: string;
}

export class OrdersStack extends Stack {
  readonly receiver: WebhookReceiver;
  readonly ledgerTable: ITableV2;

  constructor(scope: Construct, id: string, props: OrdersStackProps) {
    super(scope, id, props);
    if (!URL.canParse(props.ordersApiUrl)) throw new Error(`ordersApiUrl "${props.ordersApiUrl}" is not a URL`);

    // The app's own state, laid out as retryproof's DynamoDbLedger reads it. An accounting record: kept.
    const ledgerTable = new LedgerTable(this, 'OrdersLedger').table;

    // The receiver bundles src/place-order.ts into its executor and src/orders-ledger.ts into its reconciler.
    const receiver = new WebhookReceiver(this, 'Webhooks', config);

    // placeOrder books each order it placed, once (a conditional PutItem); the reconciler reads
    // its window through the byHour index (Query) and reverses a duplicate: it reads the entry
    // (GetItem), cancels its order with the orders API, then marks it (UpdateItem).
    receiver.grantLedgerTable(ledgerTable, { undo: true });
    for (const fn of [receiver.executorFunction, receiver.reconcilerFunction]) {
      fn.addEnvironment(ORDERS_ENV.ledgerTable, ledgerTable.tableName);
      fn.addEnvironment(ORDERS_ENV.apiUrl, props.ordersApiUrl);
    }

    new CfnOutput(this, 'OrdersWebhookUrl', {
      description: `Give the shop this URL; its signing secret goes in the secret '${receiver.namePrefix}/${config.routes[0]?.secretName ?? ''}'`,
      value: `${receiver.url}orders`,
    });
    new CfnOutput(this, 'OrdersLedgerTableName', { value: ledgerTable.tableName });

    this.receiver = receiver;
    this.ledgerTable = ledgerTable;
  }
}
