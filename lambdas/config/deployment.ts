/**
 * What every function of a deployment shares: its validated configuration, the table and
 * the queues. The Lambdas read it from what the construct gave them: the configuration and
 * the routes' queue names from their own bundle (shipped-config.ts), the names and URLs of
 * resources from their environment (ENV). The local stack builds it directly. Either way the
 * same wiring (ingest/wire-ingest.ts, executor/wire-executor.ts, reconciler/create-reconciler.ts)
 * builds each function.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Client } from '@aws-sdk/client-s3';
import { ENV, requireEnv } from './env.ts';
import type { ResolvedConfig } from './resolve-config.ts';
import { bundledConfigJson, parseShippedConfig } from './shipped-config.ts';

export interface Deployment {
  readonly config: ResolvedConfig;
  readonly eventsTable: string;
  /** The shared work queue: every route without a queue of its own. */
  readonly queueUrl: string;
  /** The queue of each route with one (ownQueue), by route name. @default - none */
  readonly routeQueueUrls?: Readonly<Record<string, string>>;
  /** The bucket of large bodies in this Region (the S3 claim check). @default - none: bodies above claimCheckAboveBytes are refused */
  readonly bodyBucket?: string;
}

/** An S3 client, or how to make one when the first large body needs it (store/s3-body-objects.ts, bodiesClient). */
export type BodiesClient = S3Client | (() => Promise<S3Client>);

/** The AWS clients a function calls through. */
export interface AwsClients {
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  /** With the deployment's bodyBucket: the bucket of large bodies (a client, or how to make one at the first large body). @default - none */
  readonly s3?: BodiesClient;
}

/**
 * Reads the deployment from the function's bundle and its environment. Call it at cold start:
 * a missing variable or a bundle without its configuration fails the init, not a delivery.
 * @param shippedJson the configuration the construct bundled; by default this bundle's own
 * @throws Error naming the variable or what the bundle lacks
 */
export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env, shippedJson: string | undefined = bundledConfigJson()): Deployment {
  const shipped = parseShippedConfig(shippedJson);
  const config = shipped.resolved;
  const queueUrl = requireEnv(ENV.queueUrl, env);
  const routeQueueUrls = routeQueueUrlsOf(queueUrl, shipped.routeQueueNames);
  for (const route of config.routes) {
    if (route.ownQueue && routeQueueUrls[route.name] === undefined) {
      throw new Error(`the configuration bundled with this function names no queue for route "${route.name}", which has a queue of its own`);
    }
  }
  const bodyBucket = env[ENV.bodyBucket];
  return {
    config,
    eventsTable: requireEnv(ENV.eventsTable, env),
    queueUrl,
    routeQueueUrls,
    ...(bodyBucket === undefined || bodyBucket === '' ? {} : { bodyBucket }),
  };
}

/**
 * The URL of each route's own queue: the shared queue's, `https://sqs.<region>.<domain>/<account>/<name>`,
 * with the route queue's name for the last part. The stack creates every work queue in its
 * own account and Region, so only the name differs; the URLs then take no room in the
 * environment, however many routes have a queue of their own.
 */
function routeQueueUrlsOf(queueUrl: string, names: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  const head = queueUrl.slice(0, queueUrl.lastIndexOf('/') + 1);
  return Object.fromEntries(Object.entries(names).map(([route, name]) => [route, `${head}${name}`]));
}

/** Every queue URL of a deployment: the shared queue first, then the routes' own. */
export function workQueueUrls(deployment: Pick<Deployment, 'queueUrl' | 'routeQueueUrls'>): readonly string[] {
  return [deployment.queueUrl, ...Object.values(deployment.routeQueueUrls ?? {})];
}
