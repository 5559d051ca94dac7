/** Entry point of the ingest Lambda: production wiring, read once per cold start. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ENV, requireEnv } from '../config/env.ts';
import { SnsNotifier } from '../notify/sns-notifier.ts';
import { SecretsManagerSource } from '../secrets/secrets-manager-source.ts';
import { deploymentFromEnv } from '../config/deployment.ts';
import { wireIngest } from './wire-ingest.ts';

export const handler = wireIngest(
  deploymentFromEnv(),
  { dynamo: new DynamoDBClient({}), sqs: new SQSClient({}) },
  {
    secrets: new SecretsManagerSource(),
    notifier: new SnsNotifier(new SNSClient({}), requireEnv(ENV.alarmTopicArn)),
  },
);
