/** Entry point of the ingest Lambda: production wiring, read once per cold start. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ENV, requireEnv } from '../config/env.ts';
import { loadConfigFromEnv } from '../config/load-config.ts';
import { SERVICE } from '../observability/metric-catalogue.ts';
import { createLogger, createMetrics } from '../observability/powertools.ts';
import { SqsWorkQueue } from '../queue/sqs-work-queue.ts';
import { SecretsManagerSource } from '../secrets/secrets-manager-source.ts';
import { SnsNotifier } from '../notify/sns-notifier.ts';
import { DynamoDbEventStore } from '../store/dynamodb-event-store.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';
import { createIngestHandler } from './create-ingest-handler.ts';
import { prepareRoutes } from './prepared-route.ts';

const config = loadConfigFromEnv();
const dynamo = new DynamoDBClient({});
const eventsTable = requireEnv(ENV.eventsTable);

export const handler = createIngestHandler({
  routes: prepareRoutes(config.routes),
  store: new DynamoDbEventStore(dynamo, eventsTable),
  queue: new SqsWorkQueue(new SQSClient({}), requireEnv(ENV.queueUrl)),
  secrets: new SecretsManagerSource(),
  now: Date.now,
  resendAfterMs: config.queue.resendAfterSeconds * 1000,
  breaker: {
    routeState: new DynamoDbRouteStateStore(dynamo, eventsTable),
    notifier: new SnsNotifier(new SNSClient({}), requireEnv(ENV.alarmTopicArn)),
  },
  logger: createLogger(SERVICE.ingest),
  metrics: createMetrics(SERVICE.ingest),
});
