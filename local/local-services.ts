/**
 * The local stand-ins for the deployed stack's stateful resources: DynamoDB Local and
 * fauxqs, their data in the stack's folder so a restart keeps it, holding the events table,
 * the demo's ledger table while the demo is on, and a work queue with its DLQ per Region. One
 * fauxqs serves every Region's queues: queues of different names are as apart as queues of
 * different Regions, and the executors find each other's messages no more than across Regions.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AwsClients } from '../lambdas/config/deployment.ts';
import { ensureQueuePair, ensureTables, localDynamoClient, localSqsClient } from './aws-clients.ts';
import { startLocalDynamo, startLocalSqs } from './local-aws.ts';
import type { LocalDynamo, LocalSqs } from './local-aws.ts';
import type { LocalEndpointUrls } from './sdk-environment.ts';

export interface LocalResources {
  readonly eventsTable: string;
  /** The demo's ledger table. @default - none (the demo is off) */
  readonly ledgerTable?: string | undefined;
  /** The work queues' names, one per Region; each one's DLQ is named `<queue>-dlq`. */
  readonly queues: readonly string[];
  readonly maxReceiveCount: number;
  readonly visibilityTimeoutSeconds: number;
}

export interface QueuePair {
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly queueArn: string;
  readonly dlqArn: string;
}

export interface RunningServices extends LocalEndpointUrls {
  /** Clients on both services, for the stack's own functions. */
  readonly clients: AwsClients;
  /** Each work queue with its DLQ, by the queue's name. */
  readonly queues: ReadonlyMap<string, QueuePair>;
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
  const clients: AwsClients = { dynamo: localDynamoClient(dynamo.endpoint), sqs: localSqsClient(sqs.endpoint) };
  const stop = async (): Promise<void> => {
    clients.dynamo.destroy();
    clients.sqs.destroy();
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
    return { dynamoEndpoint: dynamo.endpoint, sqsEndpoint: sqs.endpoint, clients, queues, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
