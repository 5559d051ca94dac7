/**
 * What every function of a deployment shares: its validated configuration, the table and
 * the queue. The Lambdas read it from the environment the construct sets (ENV); the local
 * stack builds it directly. Either way the same wiring (ingest/wire-ingest.ts,
 * executor/wire-executor.ts, reconciler/create-reconciler.ts) builds each function.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Client } from '@aws-sdk/client-s3';
import { ENV, requireEnv } from './env.ts';
import { loadConfigFromEnv } from './load-config.ts';
import type { ResolvedConfig } from './resolve-config.ts';

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

/** The AWS clients a function calls through. */
export interface AwsClients {
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  /** With the deployment's bodyBucket: the bucket of large bodies. @default - none */
  readonly s3?: S3Client;
}

/**
 * Reads the deployment from the environment. Call it at cold start: a missing or invalid
 * variable fails the init, not a delivery.
 * @throws Error naming the variable, or ConfigError for an invalid configuration
 */
export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env): Deployment {
  const config = loadConfigFromEnv(env);
  const routeQueueUrls = routeQueueUrlsOf(env[ENV.routeQueueUrls]);
  for (const route of config.routes) {
    if (route.ownQueue && routeQueueUrls[route.name] === undefined) {
      throw new Error(`environment variable ${ENV.routeQueueUrls} names no queue for route "${route.name}", which has a queue of its own`);
    }
  }
  const bodyBucket = env[ENV.bodyBucket];
  return {
    config,
    eventsTable: requireEnv(ENV.eventsTable, env),
    queueUrl: requireEnv(ENV.queueUrl, env),
    routeQueueUrls,
    ...(bodyBucket === undefined || bodyBucket === '' ? {} : { bodyBucket }),
  };
}

/** The routes' own queues from their variable: absent or empty is none. */
function routeQueueUrlsOf(value: string | undefined): Readonly<Record<string, string>> {
  if (value === undefined || value === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error(`environment variable ${ENV.routeQueueUrls} is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((url) => typeof url !== 'string')) {
    throw new Error(`environment variable ${ENV.routeQueueUrls} must be a JSON object of queue URLs by route`);
  }
  return parsed as Record<string, string>;
}

/** Every queue URL of a deployment: the shared queue first, then the routes' own. */
export function workQueueUrls(deployment: Pick<Deployment, 'queueUrl' | 'routeQueueUrls'>): readonly string[] {
  return [deployment.queueUrl, ...Object.values(deployment.routeQueueUrls ?? {})];
}
