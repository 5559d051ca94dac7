import { ENV, requireEnv } from './env.ts';
import { resolveConfig } from './resolve-config.ts';
import type { ResolvedConfig } from './resolve-config.ts';
import type { RetryproofConfig } from './route-config.ts';

/**
 * Reads and validates the configuration the stack put in RETRYPROOF_CONFIG. Run at
 * cold start: a bad configuration fails the init, not a delivery.
 */
export function loadConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const raw = requireEnv(ENV.config, env);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new Error(`environment variable ${ENV.config} is not valid JSON`, { cause: err });
  }
  return resolveConfig(parsed as RetryproofConfig);
}
