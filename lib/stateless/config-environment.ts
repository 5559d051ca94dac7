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
