import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';

/**
 * The most bytes RETRYPROOF_CONFIG may take. Lambda allows 4 KB for all environment
 * variables of a function together; the rest is left for names, URLs and Powertools.
 */
export const CONFIG_ENV_MAX_BYTES = 3 * 1024;

/**
 * The value of RETRYPROOF_CONFIG: the configuration as written, not as resolved, so a
 * function re-validates it at cold start with its own copy of resolveConfig. It holds
 * secret names, never secrets.
 * @throws Error naming the size when the JSON is over {@link CONFIG_ENV_MAX_BYTES}
 */
export function configEnvironmentValue(config: RetryproofConfig): string {
  const json = JSON.stringify(config);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > CONFIG_ENV_MAX_BYTES) {
    throw new Error(
      `retryproof config is ${bytes} bytes as json, over the ${CONFIG_ENV_MAX_BYTES}-byte budget for ` +
        `RETRYPROOF_CONFIG (lambda allows 4 KB of environment per function)`,
    );
  }
  return json;
}

/**
 * The longest the part of an SQS queue URL before the queue's name can be here:
 * `https://sqs.<region>.<domain>/<account id>/`, with a Region name of up to 20 characters
 * (the longest today has 14) and the China partitions' domain, `amazonaws.com.cn`.
 */
const QUEUE_URL_HEAD_MAX_BYTES = 'https://sqs.'.length + 20 + '.amazonaws.com.cn/'.length + 12 + 1;

/**
 * The most bytes RETRYPROOF_ROUTE_QUEUE_URLS can take once CloudFormation has put in the URLs,
 * for the routes' queues by name: each URL at its longest.
 */
export function routeQueueUrlsMaxBytes(queueNames: ReadonlyMap<string, string>): number {
  const longest = Object.fromEntries([...queueNames].map(([route, name]) => [route, `${'x'.repeat(QUEUE_URL_HEAD_MAX_BYTES)}${name}`]));
  return Buffer.byteLength(JSON.stringify(longest), 'utf8');
}

/**
 * Checks that RETRYPROOF_CONFIG and RETRYPROOF_ROUTE_QUEUE_URLS fit {@link CONFIG_ENV_MAX_BYTES}
 * together: the queue URLs are part of the configuration the functions read, and the rest of
 * Lambda's 4 KB stays for the other variables, as it did before routes had queues of their own.
 * @throws Error naming both sizes when they do not
 */
export function assertRouteQueueUrlsFit(configValue: string, queueNames: ReadonlyMap<string, string>): void {
  const config = Buffer.byteLength(configValue, 'utf8');
  const urls = routeQueueUrlsMaxBytes(queueNames);
  if (config + urls > CONFIG_ENV_MAX_BYTES) {
    throw new Error(
      `retryproof config (${config} bytes as json) and the queue urls of its ${queueNames.size} routes with their own queue ` +
        `(up to ${urls} bytes) pass the ${CONFIG_ENV_MAX_BYTES}-byte budget they share (lambda allows 4 KB of environment per function): ` +
        'give fewer routes their own queue, or shorten the route names or the namePrefix',
    );
  }
}
