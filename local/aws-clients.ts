/** Clients and resources on the local AWS parts, for tests, benchmarks and the local stack. */
import { CreateTableCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { EVENTS_TABLE, eventsTableDefinition, ledgerTableDefinition } from '../lambdas/store/table-schema.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-aws.ts';

export function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
}

/** fauxqs hands out queue URLs on a host that does not resolve; the explicit endpoint wins. */
export function localSqsClient(endpoint: string): SQSClient {
  return new SQSClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, useQueueUrlAsEndpoint: false });
}

/** Creates the events table from the shared schema, with TTL on, and returns its name. */
export async function createEventsTable(client: DynamoDBClient, name: string): Promise<string> {
  await client.send(new CreateTableCommand({ TableName: name, BillingMode: 'PAY_PER_REQUEST', ...eventsTableDefinition() }));
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: { AttributeName: EVENTS_TABLE.ttlAttribute, Enabled: true },
    }),
  );
  return name;
}

/** Creates the demo ledger table from the shared schema and returns its name. */
export async function createLedgerTable(client: DynamoDBClient, name: string): Promise<string> {
  await client.send(new CreateTableCommand({ TableName: name, BillingMode: 'PAY_PER_REQUEST', ...ledgerTableDefinition() }));
  return name;
}

/**
 * Creates a queue and its DLQ with a redrive policy, as the stack does. Queue URLs are
 * rewritten onto the emulator's own address so any client can use them.
 */
export async function createQueuePair(
  client: SQSClient,
  endpoint: string,
  prefix: string,
  options: { maxReceiveCount: number; visibilityTimeoutSeconds?: number },
): Promise<{ queueUrl: string; dlqUrl: string }> {
  const dlq = await client.send(
    new CreateQueueCommand({ QueueName: `${prefix}-dlq`, Attributes: { MessageRetentionPeriod: String(14 * 86_400) } }),
  );
  const dlqUrl = `${endpoint}/000000000000/${prefix}-dlq`;
  const attrs = await client.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }));
  if (dlq.QueueUrl === undefined || attrs.Attributes?.QueueArn === undefined) throw new Error('DLQ was not created');
  await client.send(
    new CreateQueueCommand({
      QueueName: prefix,
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 30),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: attrs.Attributes.QueueArn, maxReceiveCount: options.maxReceiveCount }),
      },
    }),
  );
  return { queueUrl: `${endpoint}/000000000000/${prefix}`, dlqUrl };
}
