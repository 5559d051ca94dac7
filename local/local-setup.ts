/**
 * What a configuration file may export beside `config`, for `npm start` only: a function
 * that prepares, on the local services, what the user's own action and ledger modules need
 * (their ledger table, say), and returns the environment those modules read. When deployed,
 * the user's CDK stack creates those resources and sets that environment; locally nobody
 * else does.
 *
 *   export async function localSetup(local: LocalServices): Promise<Record<string, string>> {
 *     await createOrdersTable(local.dynamo, 'orders-ledger');
 *     return { ORDERS_LEDGER_TABLE: 'orders-ledger' };
 *   }
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';

/** The local services, as the local stack runs them. */
export interface LocalServices {
  /** A client on DynamoDB Local. The stack destroys it when it stops: keep no reference. */
  readonly dynamo: DynamoDBClient;
  /** A client on the local SQS (fauxqs). The stack destroys it when it stops: keep no reference. */
  readonly sqs: SQSClient;
  /** DynamoDB Local's URL, also set as AWS_ENDPOINT_URL_DYNAMODB for the user's modules. */
  readonly dynamoEndpoint: string;
  /** The local SQS URL, also set as AWS_ENDPOINT_URL_SQS for the user's modules. */
  readonly sqsEndpoint: string;
  /** The region the local clients use, also set as AWS_REGION. */
  readonly region: string;
}

/**
 * Called once the local services run, before the action and ledger modules are imported,
 * on every start (a restarted stack keeps its data: create only what is missing). The
 * variables it returns are set on the local stack's process environment, which the user's
 * modules then read as they would read their function's environment when deployed.
 */
export type LocalSetup = (local: LocalServices) => Promise<Readonly<Record<string, string>>>;

/** `localSetup` failed: the user's code threw or rejected. */
export class LocalSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LocalSetupError';
  }
}

/**
 * Runs a configuration file's `localSetup` and checks what it returns.
 * @param configFile the file, for messages
 * @returns the variables to set for the user's modules
 * @throws LocalSetupError when it throws, or when it returns anything but an object of strings
 */
export async function runLocalSetup(setup: LocalSetup, local: LocalServices, configFile: string): Promise<Readonly<Record<string, string>>> {
  let variables: unknown;
  try {
    variables = await setup(local);
  } catch (error) {
    throw new LocalSetupError(`localSetup of ${configFile} failed: ${(error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''}`, {
      cause: error,
    });
  }
  if (variables === undefined) return {};
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    throw new LocalSetupError(`localSetup of ${configFile} must return an object of environment variables; it returned ${Array.isArray(variables) ? 'an array' : typeof variables}`);
  }
  for (const [name, value] of Object.entries(variables)) {
    if (typeof value !== 'string') {
      throw new LocalSetupError(`localSetup of ${configFile} returned ${name} as ${typeof value}; environment variables are strings`);
    }
  }
  return variables as Record<string, string>;
}
