/**
 * What every function of a deployment shares: its validated configuration, the table and
 * the queue. The Lambdas read it from the environment the construct sets (ENV); the local
 * stack builds it directly. Either way the same wiring (ingest/wire-ingest.ts,
 * executor/wire-executor.ts, reconciler/create-reconciler.ts) builds each function.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ENV, requireEnv } from './env.ts';
import { loadConfigFromEnv } from './load-config.ts';
import type { ResolvedConfig } from './resolve-config.ts';

export interface Deployment {
  readonly config: ResolvedConfig;
  readonly eventsTable: string;
  readonly queueUrl: string;
}

/** The AWS clients a function calls through. */
export interface AwsClients {
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
}

/**
 * Reads the deployment from the environment. Call it at cold start: a missing or invalid
 * variable fails the init, not a delivery.
 * @throws Error naming the variable, or ConfigError for an invalid configuration
 */
export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env): Deployment {
  return {
    config: loadConfigFromEnv(env),
    eventsTable: requireEnv(ENV.eventsTable, env),
    queueUrl: requireEnv(ENV.queueUrl, env),
  };
}
