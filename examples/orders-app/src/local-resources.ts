/**
 * What the orders-app needs on the local stack's DynamoDB Local, made by `localSetup`
 * (retryproof.config.ts): its ledger table, laid out as on AWS (ledger-schema.ts).
 */
import { CreateTableCommand, DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ORDERS_LEDGER } from './ledger-schema.ts';

/** Creates the orders ledger table unless it exists: a restarted local stack keeps its data. */
export async function ensureOrdersLedgerTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const { partitionKey, byDay } = ORDERS_LEDGER;
  await dynamo.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }],
      AttributeDefinitions: [
        { AttributeName: partitionKey, AttributeType: 'S' },
        { AttributeName: byDay.partitionKey, AttributeType: 'S' },
        { AttributeName: byDay.sortKey, AttributeType: 'N' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: byDay.name,
          KeySchema: [
            { AttributeName: byDay.partitionKey, KeyType: 'HASH' },
            { AttributeName: byDay.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
}
