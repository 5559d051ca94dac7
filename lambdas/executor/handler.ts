/** Entry point of the executor Lambda: production wiring, read once per cold start. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ENV, requireEnv } from '../config/env.ts';
import { loadConfigFromEnv } from '../config/load-config.ts';
import { SERVICE } from '../observability/metric-catalogue.ts';
import { createLogger, createMetrics } from '../observability/powertools.ts';
import { SqsMessageVisibility } from '../queue/sqs-message-visibility.ts';
import { SqsWorkQueue } from '../queue/sqs-work-queue.ts';
import { DynamoDbExecutionStore } from '../store/dynamodb-execution-store.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';
import { builtInActions } from '../actions/built-in-actions.ts';
import { createExecutorHandler } from './create-executor-handler.ts';

const config = loadConfigFromEnv();
const dynamo = new DynamoDBClient({});
const eventsTable = requireEnv(ENV.eventsTable);
const queueUrl = requireEnv(ENV.queueUrl);
const sqs = new SQSClient({});

export const handler = createExecutorHandler({
  routes: new Map(config.routes.map((r) => [r.name, r])),
  actions: builtInActions({ dynamo, ledgerTable: process.env[ENV.ledgerTable] }),
  store: new DynamoDbExecutionStore(dynamo, eventsTable),
  routeState: new DynamoDbRouteStateStore(dynamo, eventsTable),
  workQueue: new SqsWorkQueue(sqs, queueUrl),
  visibility: new SqsMessageVisibility(sqs, queueUrl),
  maxReceiveCount: config.queue.maxReceiveCount,
  now: Date.now,
  logger: createLogger(SERVICE.executor),
  metrics: createMetrics(SERVICE.executor),
});
