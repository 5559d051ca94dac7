/** The executor's one composition root: the Lambda entry and the local stack both build it here. */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { ActionRegistry } from '../actions/action-registry.ts';
import { createExecutorHandler } from './create-executor-handler.ts';
import { SERVICE } from '../observability/metric-catalogue.ts';
import { createLogger, createMetrics } from '../observability/powertools.ts';
import type { MessageVisibility } from '../ports/message-visibility.ts';
import { SqsMessageVisibility } from '../queue/sqs-message-visibility.ts';
import { sqsWorkQueueOf } from '../queue/routed-work-queue.ts';
import { DynamoDbEntityOrder } from '../store/dynamodb-entity-order.ts';
import { DynamoDbExecutionStore } from '../store/dynamodb-execution-store.ts';
import { bodyObjectsOf } from '../store/s3-body-objects.ts';
import { DynamoDbRateGate } from '../store/dynamodb-rate-gate.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';
import { workQueueUrls } from '../config/deployment.ts';
import type { AwsClients, Deployment } from '../config/deployment.ts';
import { ROUTE_STATE_MAX_AGE_MS, dependencyBackoffSeconds, takeoverMarginMs } from '../config/route-config.ts';
import { RoutePauseCache } from './route-pauses.ts';

/** What differs between where the executor runs: the Lambda, the local stack, a test. */
export interface ExecutorWiring {
  /** The actions the routes name: the user's modules (action-modules.ts). */
  readonly actions: ActionRegistry;
  /** @default - SQS's ChangeMessageVisibility on the work queue */
  readonly visibility?: MessageVisibility;
  /** @default - Powertools' logger for the executor service */
  readonly logger?: Logger;
  /** @default - Powertools' metrics for the executor service */
  readonly metrics?: Metrics;
  /** @default Date.now */
  readonly now?: () => number;
  /** The clock a route state's age is counted on (route-pauses.ts). @default performance.now */
  readonly monotonicNow?: () => number;
}

export function wireExecutor(deployment: Deployment, clients: AwsClients, wiring: ExecutorWiring) {
  const { config, eventsTable } = deployment;
  const bodies = bodyObjectsOf(clients.s3, deployment.bodyBucket);
  return createExecutorHandler({
    routes: new Map(config.routes.map((r) => [r.name, r])),
    actions: wiring.actions,
    store: new DynamoDbExecutionStore(clients.dynamo, eventsTable, config.clockSkewSeconds),
    pauses: new RoutePauseCache(new DynamoDbRouteStateStore(clients.dynamo, eventsTable), { maxAgeMs: ROUTE_STATE_MAX_AGE_MS, monotonicNow: wiring.monotonicNow ?? (() => performance.now()) }),
    rateGate: new DynamoDbRateGate(clients.dynamo, eventsTable),
    order: new DynamoDbEntityOrder(clients.dynamo, eventsTable, { clockSkewSeconds: config.clockSkewSeconds }),
    workQueue: sqsWorkQueueOf(clients.sqs, deployment, bodies === undefined ? undefined : { bodies, config }),
    ...(bodies === undefined ? {} : { bodies }),
    visibility: wiring.visibility ?? new SqsMessageVisibility(clients.sqs, workQueueUrls(deployment)),
    maxReceiveCount: config.queue.maxReceiveCount,
    takeoverMarginMs: takeoverMarginMs(config.clockSkewSeconds),
    dependencyBackoff: (receiveCount) => dependencyBackoffSeconds(receiveCount, config.queue.visibilityTimeoutSeconds, config.executorTimeoutSeconds),
    now: wiring.now ?? Date.now,
    logger: wiring.logger ?? createLogger(SERVICE.executor),
    metrics: wiring.metrics ?? createMetrics(SERVICE.executor),
  });
}
