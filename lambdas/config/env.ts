/**
 * The environment contract between the CDK stack and the functions. Names live here so
 * the construct that sets them and the handler that reads them cannot disagree. Each holds
 * one name or URL, whatever the number of routes: the configuration, which grows with them,
 * is in the function's code (shipped-config.ts), as Lambda allows 4 KB of environment in all.
 */
export const ENV = {
  eventsTable: 'RETRYPROOF_EVENTS_TABLE',
  /** The shared work queue; a route's own queue has the same URL but for its name (shipped-config.ts). */
  queueUrl: 'RETRYPROOF_QUEUE_URL',
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
