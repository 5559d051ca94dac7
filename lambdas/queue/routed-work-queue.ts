import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Deployment } from '../config/deployment.ts';
import type { WorkMessage } from '../domain/event-record.ts';
import type { SendOptions, WorkQueue } from '../ports/work-queue.ts';
import { SqsWorkQueue } from './sqs-work-queue.ts';

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

/** The deployment's work queue on SQS, routed by route. */
export function sqsWorkQueueOf(client: SQSClient, deployment: Pick<Deployment, 'queueUrl' | 'routeQueueUrls'>): WorkQueue {
  const own = Object.entries(deployment.routeQueueUrls ?? {});
  const shared = new SqsWorkQueue(client, deployment.queueUrl);
  if (own.length === 0) return shared;
  return new RoutedWorkQueue(shared, new Map(own.map(([route, url]) => [route, new SqsWorkQueue(client, url)])));
}
