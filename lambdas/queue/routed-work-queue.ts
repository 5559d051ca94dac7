import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Deployment } from '../config/deployment.ts';
import type { WorkMessage } from '../domain/event-record.ts';
import type { SendOptions, WorkQueue } from '../ports/work-queue.ts';
import { SqsWorkQueue } from './sqs-work-queue.ts';
import { FreshBodyWorkQueue } from './fresh-body-work-queue.ts';
import { bodyObjectRenewAfterSeconds, longestTtlSeconds } from '../domain/body-object.ts';
import type { BodyObjects } from '../ports/body-objects.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { takeoverMarginMs } from '../config/route-config.ts';

/**
 * The work queue as every sender sees it (ingest, executor, reconciler, route control, bulk
 * redrive): a route with a queue of its own gets its messages there, every other route the
 * shared queue. The route a message names decides, so a dead-letter copy of an isolated route
 * also leaves through that route's queue, and its redrive policy moves it to the one DLQ.
 */
export class RoutedWorkQueue implements WorkQueue {
  readonly #shared: WorkQueue;
  readonly #byRoute: ReadonlyMap<string, WorkQueue>;

  constructor(shared: WorkQueue, byRoute: ReadonlyMap<string, WorkQueue>) {
    this.#shared = shared;
    this.#byRoute = byRoute;
  }

  /** The queue a route's work goes to. */
  queueOf(route: string): WorkQueue {
    return this.#byRoute.get(route) ?? this.#shared;
  }

  send(message: WorkMessage, options?: SendOptions): Promise<void> {
    return this.queueOf(message.route).send(message, options);
  }
}

/** The large bodies a sender's messages may point to, and the configuration their life follows from. */
export interface SentBodies {
  readonly bodies: BodyObjects;
  readonly config: Pick<ResolvedConfig, 'routes' | 'clockSkewSeconds'>;
}

/**
 * The deployment's work queue on SQS, routed by route. With the bucket of large bodies, every
 * message that points to one keeps it alive first (fresh-body-work-queue.ts).
 */
export function sqsWorkQueueOf(client: SQSClient, deployment: Pick<Deployment, 'queueUrl' | 'routeQueueUrls'>, sent?: SentBodies): WorkQueue {
  const own = Object.entries(deployment.routeQueueUrls ?? {});
  const shared = new SqsWorkQueue(client, deployment.queueUrl);
  const routed = own.length === 0 ? shared : new RoutedWorkQueue(shared, new Map(own.map(([route, url]) => [route, new SqsWorkQueue(client, url)])));
  if (sent === undefined) return routed;
  return new FreshBodyWorkQueue(routed, sent.bodies, {
    renewAfterMs: bodyObjectRenewAfterSeconds(longestTtlSeconds(sent.config.routes)) * 1000,
    clockMarginMs: takeoverMarginMs(sent.config.clockSkewSeconds),
  });
}
