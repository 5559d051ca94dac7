/** Clients and resources on the local AWS parts, for tests, benchmarks and the local stack. */
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceNotFoundException, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, GetQueueUrlCommand, QueueDoesNotExist, SetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { EVENTS_TABLE, eventsTableDefinition, ledgerTableDefinition } from '../lambdas/store/table-schema.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-credentials.ts';

export function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
}

/** fauxqs hands out queue URLs on a host that does not resolve; the explicit endpoint wins. */
export function localSqsClient(endpoint: string): SQSClient {
  return new SQSClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, useQueueUrlAsEndpoint: false });
}

/**
 * fauxqs serves S3 on the SQS endpoint too. Path-style addressing (`<endpoint>/<bucket>/<key>`):
 * the SDK's default, the bucket as a subdomain, would call a host that does not resolve.
 */
export function localS3Client(endpoint: string): S3Client {
  return new S3Client({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, forcePathStyle: true });
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

async function tableExists(client: DynamoDBClient, name: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: name }));
    return true;
  } catch (err) {
    if (err instanceof ResourceNotFoundException) return false;
    throw err;
  }
}

/**
 * Creates the events table, and the demo ledger table when one is named, unless they exist
 * (a restarted stack keeps its data).
 */
export async function ensureTables(
  client: DynamoDBClient,
  names: { eventsTable: string; ledgerTable?: string | undefined },
): Promise<{ created: string[] }> {
  const created: string[] = [];
  if (!(await tableExists(client, names.eventsTable))) created.push(await createEventsTable(client, names.eventsTable));
  if (names.ledgerTable !== undefined && !(await tableExists(client, names.ledgerTable))) {
    created.push(await createLedgerTable(client, names.ledgerTable));
  }
  return { created };
}

async function queueExists(client: SQSClient, name: string): Promise<boolean> {
  try {
    await client.send(new GetQueueUrlCommand({ QueueName: name }));
    return true;
  } catch (err) {
    if (err instanceof QueueDoesNotExist || (err as Error).name === 'QueueDoesNotExist' || (err as Error).name === 'AWS.SimpleQueueService.NonExistentQueue') {
      return false;
    }
    throw err;
  }
}

/**
 * The queue pair of {@link createQueuePair}, kept across restarts: created when absent,
 * otherwise its visibility timeout and redrive policy are set to today's values (a
 * CreateQueue with other attributes than the existing queue's would be refused).
 */
export async function ensureQueuePair(
  client: SQSClient,
  endpoint: string,
  prefix: string,
  options: { maxReceiveCount: number; visibilityTimeoutSeconds: number },
): Promise<{ queueUrl: string; dlqUrl: string; queueArn: string; dlqArn: string; created: boolean }> {
  const arnOf = async (url: string): Promise<string> => {
    const out = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
    const arn = out.Attributes?.QueueArn;
    if (arn === undefined) throw new Error(`queue ${url} has no ARN`);
    return arn;
  };
  const exists = (await queueExists(client, prefix)) && (await queueExists(client, `${prefix}-dlq`));
  if (!exists) {
    const pair = await createQueuePair(client, endpoint, prefix, options);
    return { ...pair, queueArn: await arnOf(pair.queueUrl), dlqArn: await arnOf(pair.dlqUrl), created: true };
  }
  const queueUrl = `${endpoint}/000000000000/${prefix}`;
  const dlqUrl = `${endpoint}/000000000000/${prefix}-dlq`;
  const dlqArn = await arnOf(dlqUrl);
  await client.send(
    new SetQueueAttributesCommand({
      QueueUrl: queueUrl,
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: options.maxReceiveCount }),
      },
    }),
  );
  return { queueUrl, dlqUrl, queueArn: await arnOf(queueUrl), dlqArn, created: false };
}

/**
 * A route's own queue (route-queues.ts), kept across restarts as {@link ensureQueuePair} keeps
 * the shared one: the shared queue's visibility timeout and a redrive policy to the Region's one
 * DLQ at the same maxReceiveCount, as the construct gives every route queue.
 */
export async function ensureRouteQueue(
  client: SQSClient,
  endpoint: string,
  name: string,
  options: { dlqArn: string; maxReceiveCount: number; visibilityTimeoutSeconds: number },
): Promise<{ queueUrl: string; queueArn: string; created: boolean }> {
  const queueUrl = `${endpoint}/000000000000/${name}`;
  const attributes = {
    VisibilityTimeout: String(options.visibilityTimeoutSeconds),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: options.dlqArn, maxReceiveCount: options.maxReceiveCount }),
  };
  const created = !(await queueExists(client, name));
  if (created) await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  else await client.send(new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: attributes }));
  const out = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  const queueArn = out.Attributes?.QueueArn;
  if (queueArn === undefined) throw new Error(`queue ${queueUrl} has no ARN`);
  return { queueUrl, queueArn, created };
}

/** An S3 error's HTTP status, or undefined. */
function httpStatusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

async function bucketExists(client: S3Client, name: string): Promise<boolean> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: name }));
    return true;
  } catch (err) {
    // HeadBucket has no body, so no error code either: "404 Not Found" is the whole answer (S3 API Reference, HeadBucket).
    if ((err as Error).name === 'NotFound' || (err as Error).name === 'NoSuchBucket' || httpStatusOf(err) === 404) return false;
    throw err;
  }
}

/**
 * A bucket of large bodies, kept across restarts: created when absent. AWS answers a CreateBucket
 * on a bucket one already owns with BucketAlreadyOwnedByYou (409) outside us-east-1 (S3 API
 * Reference, CreateBucket, Errors); fauxqs 2.4 answers 200 and changes nothing
 * (dist/s3/s3Store.js, createBucket). Either is the bucket there: created false.
 */
export async function ensureBucket(client: S3Client, name: string): Promise<{ created: boolean }> {
  if (await bucketExists(client, name)) return { created: false };
  try {
    await client.send(new CreateBucketCommand({ Bucket: name }));
    return { created: true };
  } catch (err) {
    if ((err as Error).name === 'BucketAlreadyOwnedByYou') return { created: false };
    throw err;
  }
}
