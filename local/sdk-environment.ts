/**
 * The AWS SDK's own environment variables, set so that the default clients the user's
 * modules build (`new DynamoDBClient({})`, as in their Lambda) reach the local services and
 * nothing else. The local stack is a process of its own, so it sets them on its own
 * environment, once, before it imports those modules.
 */
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-credentials.ts';

/** Where the local services listen. */
export interface LocalEndpointUrls {
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
}

/**
 * Variables that would take the SDK elsewhere: a profile brings its own credentials (an
 * expired SSO session fails every call) and its own endpoints; the last one turns the
 * endpoint variables off.
 */
const REMOVED = ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS'] as const;

/** The variables that send default clients to the local DynamoDB and SQS, with fake credentials. */
export function localSdkVariables(urls: LocalEndpointUrls): Readonly<Record<string, string>> {
  return {
    AWS_ENDPOINT_URL_DYNAMODB: urls.dynamoEndpoint,
    AWS_ENDPOINT_URL_SQS: urls.sqsEndpoint,
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
  };
}

/** Points the SDK's default clients of this process at the local services, whatever the shell had set. */
export function useLocalSdk(urls: LocalEndpointUrls, env: NodeJS.ProcessEnv = process.env): void {
  for (const name of REMOVED) Reflect.deleteProperty(env, name);
  Object.assign(env, localSdkVariables(urls));
}
