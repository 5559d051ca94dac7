/**
 * The configuration the CLI works with: the same `retryproof.config.ts` that the stack was
 * synthesized from and that the local stack runs.
 */
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { ResolvedConfig } from '../../lambdas/config/resolve-config.ts';
import { config } from '../../retryproof.config.ts';

export function projectConfig(): ResolvedConfig {
  return resolveConfig(config);
}
