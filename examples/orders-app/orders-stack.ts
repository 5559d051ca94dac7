/**
 * The orders-app on AWS: the app's own ledger table, one retryproof WebhookReceiver over
 * retryproof.config.ts, and what joins them: the receiver's executor and reconciler may use
 * the table, and know its name and the orders API's URL.
 */
import { CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import { AttributeType, Billing, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
// A user writes `from 'retryproof'`; inside this repository the example imports the source.
import { WebhookReceiver } from '../../lib/index.ts';
import { config } from './retryproof.config.ts';
import { ORDERS_LEDGER } from './src/ledger-schema.ts';
import { ORDERS_ENV } from './src/orders-environment.ts';

export interface OrdersStackProps extends StackProps {
  /** The downstream orders API's base URL: the action POSTs each order to its `/orders`. */
  readonly ordersApiUrl: string;
}

export class OrdersStack extends Stack {
  readonly receiver: WebhookReceiver;
  readonly ledgerTable: TableV2;

  constructor(scope: Construct, id: string, props: OrdersStackProps) {
    super(scope, id, props);
    if (!URL.canParse(props.ordersApiUrl)) throw new Error(`ordersApiUrl "${props.ordersApiUrl}" is not a URL`);

    // The app's own state, laid out as src/ledger-schema.ts says. An accounting record: kept.
    const { partitionKey, byDay } = ORDERS_LEDGER;
    const ledgerTable = new TableV2(this, 'OrdersLedger', {
      partitionKey: { name: partitionKey, type: AttributeType.STRING },
      globalSecondaryIndexes: [
        {
          indexName: byDay.name,
          partitionKey: { name: byDay.partitionKey, type: AttributeType.STRING },
          sortKey: { name: byDay.sortKey, type: AttributeType.NUMBER },
        },
      ],
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // The receiver bundles src/place-order.ts into its executor and src/orders-ledger.ts into its reconciler.
    const receiver = new WebhookReceiver(this, 'Webhooks', config);

    // placeOrder books each order it placed, once (a conditional PutItem).
    ledgerTable.grant(receiver.executorFunction, 'dynamodb:PutItem');
    // The reconciler reads its window through the byDay index (Query), and reverses a duplicate:
    // it reads the entry (GetItem), cancels its order with the orders API, then marks it (UpdateItem).
    ledgerTable.grant(receiver.reconcilerFunction, 'dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem');
    for (const fn of [receiver.executorFunction, receiver.reconcilerFunction]) {
      fn.addEnvironment(ORDERS_ENV.ledgerTable, ledgerTable.tableName);
      fn.addEnvironment(ORDERS_ENV.apiUrl, props.ordersApiUrl);
    }

    new CfnOutput(this, 'OrdersWebhookUrl', {
      description: "Give the shop this URL; its signing secret goes in the secret 'orders-app/webhook'",
      value: `${receiver.url}orders`,
    });
    new CfnOutput(this, 'OrdersLedgerTableName', { value: ledgerTable.tableName });

    this.receiver = receiver;
    this.ledgerTable = ledgerTable;
  }
}
