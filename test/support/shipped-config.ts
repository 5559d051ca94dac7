/**
 * The tests' stand-in for the construct's bundling: a function's code, run unbundled, finds the
 * configuration where a bundle would carry it (lambdas/config/shipped-config.ts).
 */
import { routeQueueName } from '../../lib/stateful/work-queue.ts';
import { shippedConfigJson } from '../../lib/stateless/shipped-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';

/** The JSON the construct would bundle for `config` under `namePrefix`: its routes with ownQueue get their queue's name. */
export function shippedJsonOf(config: RetryproofConfig, namePrefix = 'Retryproof'): string {
  const own = resolveConfig(config).routes.filter((r) => r.ownQueue);
  return shippedConfigJson(config, new Map(own.map((r) => [r.name, routeQueueName(namePrefix, r.name)])));
}

/**
 * Puts `json` where the bundle's define would put it, until the returned function takes it
 * away: a module imported in between reads it at its cold start.
 */
export function shipConfig(json: string): () => void {
  const holder = globalThis as { RETRYPROOF_SHIPPED_CONFIG?: string };
  const before = holder.RETRYPROOF_SHIPPED_CONFIG;
  holder.RETRYPROOF_SHIPPED_CONFIG = json;
  return () => {
    if (before === undefined) Reflect.deleteProperty(holder, 'RETRYPROOF_SHIPPED_CONFIG');
    else holder.RETRYPROOF_SHIPPED_CONFIG = before;
  };
}
