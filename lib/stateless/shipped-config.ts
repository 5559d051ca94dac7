import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import type { ShippedConfig } from '../../lambdas/config/shipped-config.ts';

/**
 * The JSON each function's bundle carries (lambdas/config/shipped-config.ts): the configuration
 * resolved here, at synth, so a cold start neither loads the schema nor checks it again, and the
 * name of each route's own queue. It holds secret names, never secrets. It grows with the
 * routes, about 500 bytes each with every default filled in; it is code, so no quota of the
 * environment applies to it (docs/architecture.md, "The configuration ships in the code").
 */
export function shippedConfigJson(config: RetryproofConfig, routeQueueNames: ReadonlyMap<string, string>): string {
  const shipped: ShippedConfig = { resolved: resolveConfig(config), routeQueueNames: Object.fromEntries(routeQueueNames) };
  return JSON.stringify(shipped);
}
