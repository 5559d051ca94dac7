/**
 * The naive check-then-act receiver as it would be deployed: wiring at module scope, as in
 * lambdas/ingest/handler.ts. Bundled and imported cold by the benchmark; never invoked.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { requireEnv } from '../../lambdas/config/env.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { SecretsManagerSource } from '../../lambdas/secrets/secrets-manager-source.ts';
import { createNaiveReceiver } from '../receivers/naive.ts';

export const handler = createNaiveReceiver({
  client: new DynamoDBClient({}),
  tableName: requireEnv('KEYS_TABLE'),
  queue: new SqsWorkQueue(new SQSClient({}), requireEnv('QUEUE_URL')),
  secrets: new SecretsManagerSource(),
});
