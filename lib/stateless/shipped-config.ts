import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import type { ShippedConfig } from '../../lambdas/config/shipped-config.ts';

/**
 * The JSON each function's bundle carries (lambdas/config/shipped-config.ts): the configuration
 * as written, not as resolved, so a function checks it again at cold start with its own copy
 * of resolveConfig, and the name of each route's own queue. It holds secret names, never
 * secrets. It grows with the routes, about 170 bytes each; it is code, so no quota of the
 * environment applies to it (docs/architecture.md, "The configuration ships in the code").
 */
export function shippedConfigJson(config: RetryproofConfig, routeQueueNames: ReadonlyMap<string, string>): string {
  const shipped: ShippedConfig = { config, routeQueueNames: Object.fromEntries(routeQueueNames) };
  return JSON.stringify(shipped);
}
