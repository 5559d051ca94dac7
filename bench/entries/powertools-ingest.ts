/**
 * The Powertools peer as it would be deployed: wiring at module scope, as in
 * lambdas/ingest/handler.ts. Bundled and imported cold by the benchmark; never invoked.
 */
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { requireEnv } from '../../lambdas/config/env.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { SecretsManagerSource } from '../../lambdas/secrets/secrets-manager-source.ts';
import { createPowertoolsReceiver } from '../receivers/powertools.ts';

export const handler = createPowertoolsReceiver({
  persistenceStore: new DynamoDBPersistenceLayer({ tableName: requireEnv('IDEMPOTENCY_TABLE') }),
  queue: new SqsWorkQueue(new SQSClient({}), requireEnv('QUEUE_URL')),
  secrets: new SecretsManagerSource(),
});
