/**
 * What a configuration file exports: `config` (a RetryproofConfig, read by `cdk synth`
 * through the app or your own stack, and by `npm start`), and optionally `localSetup`, for
 * `npm start` only: it prepares on the local services what your own action and ledger
 * modules need (their ledger table, say) and returns the environment they read. When
 * deployed, your CDK stack creates those resources and sets that environment; locally
 * nobody else does.
 *
 *   export const localSetup: LocalSetup = async (local) => {
 *     await createLedgerTable(local.dynamo, 'my-ledger');
 *     return { MY_LEDGER_TABLE: 'my-ledger' };
 *   };
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
