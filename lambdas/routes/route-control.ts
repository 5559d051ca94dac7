/**
 * Operator verbs on routes: list, pause, resume. Resuming re-enqueues every parked record
 * of the route, found through the sparse `parked` index whatever its age.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { keptPayloadOf, workMessageOf } from '../domain/event-record.ts';
import type { ParkedRecords } from '../ports/parked-records.ts';
import type { RouteState, RouteStateStore } from '../ports/route-state-store.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import { sqsWorkQueueOf } from '../queue/routed-work-queue.ts';
import { bodyObjectsOf } from '../store/s3-body-objects.ts';
import type { S3Client } from '@aws-sdk/client-s3';
import { DynamoDbParkedRecords } from '../store/dynamodb-parked-records.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';

export interface RouteControlDeps {
  readonly states: RouteStateStore;
  readonly parked: ParkedRecords;
  readonly queue: WorkQueue;
  /** The configured route names. */
  readonly routes: readonly string[];
  readonly now: () => number;
}

export interface ResumeResult {
  /** False when the route was not paused; parked leftovers are re-enqueued all the same. */
  readonly resumed: boolean;
  readonly reenqueued: number;
}

export interface RouteControl {
  list(): Promise<RouteState[]>;
  pause(route: string, reason?: string): Promise<boolean>;
  resume(route: string, onProgress?: (reenqueued: number) => void): Promise<ResumeResult>;
}

/** @throws Error naming the route when it is not in the configuration */
export function routeControl(deps: RouteControlDeps): RouteControl {
  const known = (route: string): void => {
    if (!deps.routes.includes(route)) {
      throw new Error(`route "${route}" is not configured; configured routes: ${deps.routes.join(', ')}`);
    }
  };
  return {
    list: () => Promise.all(deps.routes.map((r) => deps.states.get(r))),
    pause: (route, reason = 'paused by an operator') => {
      known(route);
      return deps.states.pause(route, { reason, at: deps.now(), by: 'operator' });
    },
    async resume(route, onProgress) {
      known(route);
      const resumed = await deps.states.resume(route, deps.now());
      let reenqueued = 0;
      for await (const page of deps.parked.listParked(route)) {
        for (const record of page) {
          // why: docs/architecture.md#resume (send, then unpark; a record without a payload stays parked)
          const payload = keptPayloadOf(record);
          if (payload === undefined) continue;
          await deps.queue.send(workMessageOf(record, payload));
          if (!(await deps.parked.unpark(record, deps.now()))) continue;
          reenqueued++;
          onProgress?.(reenqueued);
        }
      }
      return { resumed, reenqueued };
    },
  };
}

export interface RouteControlOptions {
  readonly dynamo: DynamoDBClient;
  readonly eventsTable: string;
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** The queue of each route with one (ownQueue), by route. @default - none */
  readonly routeQueueUrls?: Readonly<Record<string, string>>;
  /** With bodyBucket: the bucket of large bodies, whose objects a re-send keeps alive. @default - none */
  readonly s3?: S3Client;
  readonly bodyBucket?: string;
  readonly config: ResolvedConfig;
  /**
   * The routes the stack really serves, when they differ from the configuration's (the local
   * stack adds one demo route per scheme).
   * @default - the configuration's routes
   */
  readonly routes?: readonly string[];
  readonly now?: () => number;
}

/** The work queue of a person's tools: a re-send keeps the body object it points to alive (fresh-body-work-queue.ts). */
export function sentQueueOf(options: RouteControlOptions): WorkQueue {
  const bodies = bodyObjectsOf(options.s3, options.bodyBucket);
  return sqsWorkQueueOf(options.sqs, options, bodies === undefined ? undefined : { bodies, config: options.config });
}

/** Route control over DynamoDB and SQS, for the CLI, the local stack and the storm. */
export function createRouteControl(options: RouteControlOptions): RouteControl {
  return routeControl({
    states: new DynamoDbRouteStateStore(options.dynamo, options.eventsTable),
    parked: new DynamoDbParkedRecords(options.dynamo, options.eventsTable),
    queue: sentQueueOf(options),
    routes: options.routes ?? options.config.routes.map((r) => r.name),
    now: options.now ?? Date.now,
  });
}
