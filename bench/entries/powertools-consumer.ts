/**
 * The Powertools SQS consumer as it would be deployed: wiring at module scope, as in
 * lambdas/executor/lambda.ts. Kept beside the ingest peers' entries; the benchmark runs the
 * same handler from bench/executors/executor-process.ts.
 */
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { requireEnv } from '../../lambdas/config/env.ts';
import { createPowertoolsConsumer } from '../receivers/powertools-consumer.ts';

export const handler = createPowertoolsConsumer({
  persistenceStore: new DynamoDBPersistenceLayer({ tableName: requireEnv('IDEMPOTENCY_TABLE') }),
  // The team's business step goes here.
  effect: () => Promise.resolve(),
});
