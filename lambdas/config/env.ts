/**
 * The environment contract between the CDK stack and the functions. Names live here so
 * the construct that sets them and the handler that reads them cannot disagree.
 */
export const ENV = {
  /** JSON of the RetryproofConfig; re-validated at cold start. Holds no secrets, only their names. */
  config: 'RETRYPROOF_CONFIG',
  eventsTable: 'RETRYPROOF_EVENTS_TABLE',
  queueUrl: 'RETRYPROOF_QUEUE_URL',
  /**
   * JSON `{ "<route>": "<queue URL>" }` of the routes with a queue of their own (ownQueue);
   * every other route's work goes to RETRYPROOF_QUEUE_URL. Absent means none.
   */
  routeQueueUrls: 'RETRYPROOF_ROUTE_QUEUE_URLS',
  /** The bucket of large bodies (the S3 claim check). Absent means none: large bodies are refused. */
  bodyBucket: 'RETRYPROOF_BODY_BUCKET',
} as const;

/**
 * Reads a required environment variable. Call it once, at module scope, so a missing
 * variable fails the cold start instead of a delivery.
 * @throws Error naming the variable
 */
export function requireEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new Error(`environment variable ${name} is not set`);
  }
  return value;
}
