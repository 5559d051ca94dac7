/**
 * What the orders-app needs on the local stack's DynamoDB Local, made by `localSetup`
 * (retryproof.config.ts): its ledger table, laid out as on AWS (DYNAMODB_LEDGER_LAYOUT, the
 * layout of retryproof's DynamoDbLedger and its LedgerTable construct).
 */
import { CreateTableCommand, DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DYNAMODB_LEDGER_LAYOUT } from 'retryproof/actions';

/** Creates the orders ledger table unless it exists: a restarted local stack keeps its data. */
export async function ensureOrdersLedgerTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const { partitionKey, byHourIndex } = DYNAMODB_LEDGER_LAYOUT;
  await dynamo.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }],
      AttributeDefinitions: [partitionKey, byHourIndex.partitionKey, byHourIndex.sortKey].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
      GlobalSecondaryIndexes: [
        {
          IndexName: byHourIndex.name,
          KeySchema: [
            { AttributeName: byHourIndex.partitionKey, KeyType: 'HASH' },
            { AttributeName: byHourIndex.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
}
