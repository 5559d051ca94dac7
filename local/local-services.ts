/**
 * The local stand-ins for the deployed stack's stateful resources: DynamoDB Local and
 * fauxqs, their data in the stack's folder so a restart keeps it, holding the events table,
 * the demo's ledger table while the demo is on, and a work queue with its DLQ per Region (and
 * a queue per isolated route beside it, dead-lettering into that DLQ: route-queues.ts), and a
 * bucket of large bodies per Region (the S3 claim check) on fauxqs's S3, which it serves on its SQS
 * endpoint. One fauxqs serves every Region's queues and buckets: queues of different names are as
 * apart as queues of different Regions, and the executors find each other's messages no more than
 * across Regions.
 *
 * fauxqs keeps its S3 buckets and objects in the same SQLite file as its queues when it has a
 * `dataDir` (the fauxqs package's readme, under Persistence: "S3 buckets ..., objects with metadata"), so a restart
 * on the same folder finds the bodies its records point to, as it finds their messages.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { AwsClients } from '../lambdas/config/deployment.ts';
import { ensureBucket, ensureQueuePair, ensureRouteQueue, ensureTables, localDynamoClient, localS3Client, localSqsClient } from './aws-clients.ts';
import { startLocalDynamo, startLocalSqs } from './local-aws.ts';
import type { LocalDynamo, LocalSqs } from './local-aws.ts';
import type { LocalEndpointUrls } from './sdk-environment.ts';

export interface LocalResources {
  readonly eventsTable: string;
  /** The demo's ledger table. @default - none (the demo is off) */
  readonly ledgerTable?: string | undefined;
  /** The work queues' names, one per Region; each one's DLQ is named `<queue>-dlq`. */
  readonly queues: readonly string[];
  /**
   * The routes' own queues (route-queues.ts), by their Region's work queue, then by route: each
   * dead-letters into that work queue's DLQ. @default - none: every route's work is on its Region's work queue
   */
  readonly routeQueues?: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** The buckets of large bodies, one per Region. @default - none */
  readonly bodyBuckets?: readonly string[];
  readonly maxReceiveCount: number;
  readonly visibilityTimeoutSeconds: number;
}

export interface QueuePair {
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly queueArn: string;
  readonly dlqArn: string;
}

/** A route's own queue. */
export interface RouteQueue {
  readonly queueUrl: string;
  readonly queueArn: string;
}

export interface RunningServices extends LocalEndpointUrls {
  /** Clients on both services (S3 on fauxqs's), for the stack's own functions. */
  readonly clients: AwsClients & { readonly s3: S3Client };
  /** Where fauxqs serves S3: its SQS endpoint. */
  readonly s3Endpoint: string;
  /** The buckets of large bodies, as created or found. */
  readonly bodyBuckets: readonly string[];
  /** Each work queue with its DLQ, by the queue's name. */
  readonly queues: ReadonlyMap<string, QueuePair>;
  /** The routes' own queues, by their Region's work queue, then by route; empty when no route has one. */
  readonly routeQueues: ReadonlyMap<string, ReadonlyMap<string, RouteQueue>>;
  /** Destroys the clients, then stops both services. */
  stop(): Promise<void>;
}

/**
 * Starts both services side by side and creates what is missing of the resources.
 * @param dir the stack's folder: the data goes to `dynamodb/` and `sqs/` in it
 * @throws the error of a service that did not start (Java missing, for one), once
 *   whatever did start has stopped again
 */
export async function startLocalServices(dir: string, resources: LocalResources): Promise<RunningServices> {
  await mkdir(join(dir, 'dynamodb'), { recursive: true });
  await mkdir(join(dir, 'sqs'), { recursive: true });
  const [dynamo, sqs] = await Promise.allSettled([startLocalDynamo(join(dir, 'dynamodb')), startLocalSqs({ dataDir: join(dir, 'sqs') })]);
  const stopServices = async (): Promise<void> => {
    await Promise.all([sqs.status === 'fulfilled' ? sqs.value.stop() : undefined, dynamo.status === 'fulfilled' ? dynamo.value.stop() : undefined]);
  };
  if (dynamo.status === 'rejected' || sqs.status === 'rejected') {
    await stopServices();
    throw dynamo.status === 'rejected' ? dynamo.reason : (sqs as PromiseRejectedResult).reason;
  }
  return withResources(dynamo.value, sqs.value, resources, stopServices);
}

async function withResources(dynamo: LocalDynamo, sqs: LocalSqs, resources: LocalResources, stopServices: () => Promise<void>): Promise<RunningServices> {
  const clients = { dynamo: localDynamoClient(dynamo.endpoint), sqs: localSqsClient(sqs.endpoint), s3: localS3Client(sqs.endpoint) };
  const stop = async (): Promise<void> => {
    clients.dynamo.destroy();
    clients.sqs.destroy();
    clients.s3.destroy();
    await stopServices();
  };
  try {
    await ensureTables(clients.dynamo, { eventsTable: resources.eventsTable, ledgerTable: resources.ledgerTable });
    const queues = new Map<string, QueuePair>();
    for (const name of resources.queues) {
      const { queueUrl, dlqUrl, queueArn, dlqArn } = await ensureQueuePair(clients.sqs, sqs.endpoint, name, {
        maxReceiveCount: resources.maxReceiveCount,
        visibilityTimeoutSeconds: resources.visibilityTimeoutSeconds,
      });
      queues.set(name, { queueUrl, dlqUrl, queueArn, dlqArn });
    }
    const routeQueues = new Map<string, ReadonlyMap<string, RouteQueue>>();
    for (const [regionQueue, byRoute] of resources.routeQueues ?? new Map<string, ReadonlyMap<string, string>>()) {
      const pair = queues.get(regionQueue);
      if (pair === undefined) throw new Error(`route queues for ${regionQueue}, which is not one of the work queues`);
      const own = new Map<string, RouteQueue>();
      for (const [route, name] of byRoute) {
        const { queueUrl, queueArn } = await ensureRouteQueue(clients.sqs, sqs.endpoint, name, {
          dlqArn: pair.dlqArn,
          maxReceiveCount: resources.maxReceiveCount,
          visibilityTimeoutSeconds: resources.visibilityTimeoutSeconds,
        });
        own.set(route, { queueUrl, queueArn });
      }
      routeQueues.set(regionQueue, own);
    }
    const bodyBuckets = resources.bodyBuckets ?? [];
    for (const bucket of bodyBuckets) await ensureBucket(clients.s3, bucket);
    return { dynamoEndpoint: dynamo.endpoint, sqsEndpoint: sqs.endpoint, s3Endpoint: sqs.endpoint, clients, queues, routeQueues, bodyBuckets, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
