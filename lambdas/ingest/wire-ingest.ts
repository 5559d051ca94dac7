/** The ingest's one composition root: the Lambda entry and the local stack both build it here. */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { createIngestHandler } from './create-ingest-handler.ts';
import { prepareRoutes } from './prepared-route.ts';
import { answerMarginMsFor } from './answer-margin.ts';
import type { PreparedRoute } from './prepared-route.ts';
import { SERVICE } from '../observability/metric-catalogue.ts';
import { createLogger, createMetrics } from '../observability/powertools.ts';
import type { SecretSource } from '../ports/secret-source.ts';
import { sqsWorkQueueOf } from '../queue/routed-work-queue.ts';
import { DynamoDbEntityOrder } from '../store/dynamodb-entity-order.ts';
import { DynamoDbEventStore } from '../store/dynamodb-event-store.ts';
import { bodyObjectsOf } from '../store/s3-body-objects.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';
import type { AwsClients, Deployment } from '../config/deployment.ts';

/** What differs between where the ingest runs: the Lambda, the local stack, a test. */
export interface IngestWiring {
  /** Where signing secrets come from: Secrets Manager when deployed. */
  readonly secrets: SecretSource;
  /** The command a breaker's notice tells a person to run. @default - the deployed form */
  readonly resumeCommand?: (route: string) => string;
  /** Routes prepared once already (the local gateway reads them too). @default - prepared here */
  readonly routes?: ReadonlyMap<string, PreparedRoute>;
  /** @default - Powertools' logger for the ingest service */
  readonly logger?: Logger;
  /** @default - Powertools' metrics for the ingest service */
  readonly metrics?: Metrics;
  /** @default Date.now */
  readonly now?: () => number;
  /** @default answerMarginMsFor(the config's clockSkewSeconds) (answer-margin.ts): the deployed functions' clocks differ */
  readonly answerMarginMs?: number;
}

export function wireIngest(deployment: Deployment, clients: AwsClients, wiring: IngestWiring) {
  const { config, eventsTable } = deployment;
  const bodies = bodyObjectsOf(clients.s3, deployment.bodyBucket);
  return createIngestHandler({
    routes: wiring.routes ?? prepareRoutes(config.routes),
    store: new DynamoDbEventStore(clients.dynamo, eventsTable),
    order: new DynamoDbEntityOrder(clients.dynamo, eventsTable, { clockSkewSeconds: config.clockSkewSeconds }),
    queue: sqsWorkQueueOf(clients.sqs, deployment, bodies === undefined ? undefined : { bodies, config }),
    ...(bodies === undefined ? {} : { bodies }),
    secrets: wiring.secrets,
    now: wiring.now ?? Date.now,
    resendAfterMs: config.queue.resendAfterSeconds * 1000,
    answerMarginMs: wiring.answerMarginMs ?? answerMarginMsFor(config.clockSkewSeconds),
    breaker: {
      routeState: new DynamoDbRouteStateStore(clients.dynamo, eventsTable),
      ...(wiring.resumeCommand === undefined ? {} : { resumeCommand: wiring.resumeCommand }),
    },
    logger: wiring.logger ?? createLogger(SERVICE.ingest),
    metrics: wiring.metrics ?? createMetrics(SERVICE.ingest),
  });
}
