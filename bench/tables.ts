/** The peers' own tables on DynamoDB Local, created the way each one's documentation says. */
import { CreateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The table layout the Powertools docs require: partition key `id`, TTL on `expiration`. */
export const POWERTOOLS_TABLE = { partitionKey: 'id', ttlAttribute: 'expiration' } as const;

/** Creates a Powertools idempotency table, on demand, with TTL on. */
export async function createPowertoolsTable(client: DynamoDBClient, name: string): Promise<string> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: POWERTOOLS_TABLE.partitionKey, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: POWERTOOLS_TABLE.partitionKey, KeyType: 'HASH' }],
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: { AttributeName: POWERTOOLS_TABLE.ttlAttribute, Enabled: true },
    }),
  );
  return name;
}

/** Creates the naive receiver's key table: partition key `id`, TTL on `expiration`. */
export async function createNaiveTable(client: DynamoDBClient, name: string): Promise<string> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true } }),
  );
  return name;
}
