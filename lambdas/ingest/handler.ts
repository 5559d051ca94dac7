/** Entry point of the ingest Lambda: production wiring, read once per cold start. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { bodiesClient } from '../store/s3-body-objects.ts';
import { SecretsManagerSource } from '../secrets/secrets-manager-source.ts';
import { deploymentFromEnv } from '../config/deployment.ts';
import { wireIngest } from './wire-ingest.ts';

const deployment = deploymentFromEnv();

export const handler = wireIngest(
  deployment,
  { dynamo: new DynamoDBClient({}), sqs: new SQSClient({}), ...(deployment.bodyBucket === undefined ? {} : { s3: bodiesClient() }) },
  // No SNS client: a trip's notice is its log line and the route state; the alarm on its metric tells the topic.
  { secrets: new SecretsManagerSource() },
);
