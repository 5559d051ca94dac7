/**
 * A configuration from a test's routes: the keys only tests carry (the signing secret a
 * fixture signs with, the fuzzer's notes) stripped, since resolveConfig refuses keys it
 * does not know, and the demo on, since the fixtures' routes run the demo's `payout`.
 */
import type { RetryproofConfig, RouteConfig } from '../../lambdas/config/route-config.ts';

type TestRoute = RouteConfig & { readonly secret?: unknown; readonly previousSecret?: unknown; readonly keyIn?: unknown };

export function testConfig(routes: readonly TestRoute[], more: Omit<RetryproofConfig, 'routes'> = {}): RetryproofConfig {
  return {
    demo: true,
    ...more,
    routes: routes.map(({ secret: _secret, previousSecret: _previous, keyIn: _keyIn, ...route }) => route),
  };
}
