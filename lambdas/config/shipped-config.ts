/**
 * The configuration a function carries in its own code. At synth the construct writes it into
 * each function's bundle (esbuild's `define` of {@link SHIPPED_CONFIG_DEFINE}, in
 * lib/stateless/retryproof-function.ts), so a cold start reads it with no I/O, no network call
 * and no environment variable: Lambda allows 4 KB of environment per function, all variables
 * together (docs/architecture.md, "The configuration ships in the code").
 *
 * Pure: no CDK, no SDK, so the construct, the functions and their tests share it.
 */
import type { ResolvedConfig } from './resolve-config.ts';

/** What each function's bundle carries. */
export interface ShippedConfig {
  /**
   * The configuration as the construct resolved it at synth (each route's secret name as
   * deployed; no demo switch, no action paths). The functions use it as it is: it was checked
   * at synth, and code cannot be edited in place (docs/architecture.md#the-configuration-ships-in-the-code).
   */
  readonly resolved: ResolvedConfig;
  /**
   * The queue name of each route with a queue of its own (ownQueue), by route. Its URL is the
   * shared queue's with the last part replaced by this name: both are this stack's queues, in
   * one account and one Region.
   */
  readonly routeQueueNames: Readonly<Record<string, string>>;
}

/** The expression esbuild replaces, in every module of a function's bundle, with the JSON of its ShippedConfig. */
export const SHIPPED_CONFIG_DEFINE = 'globalThis.RETRYPROOF_SHIPPED_CONFIG';

/**
 * The JSON the construct wrote into this function's bundle; undefined when the code runs
 * unbundled (the local stack and the tests build their Deployment themselves).
 */
export function bundledConfigJson(): string | undefined {
  // The whole expression is SHIPPED_CONFIG_DEFINE: esbuild replaces it with a string literal.
  return (globalThis as { RETRYPROOF_SHIPPED_CONFIG?: string }).RETRYPROOF_SHIPPED_CONFIG;
}

/**
 * Parses a ShippedConfig from its JSON: the shape the construct writes, not each field again
 * (resolveConfig checked them at synth).
 * @throws Error when the JSON is missing, not JSON, or not the shape the construct writes
 */
export function parseShippedConfig(json: string | undefined): ShippedConfig {
  if (json === undefined) {
    throw new Error(`this function's bundle carries no configuration (${SHIPPED_CONFIG_DEFINE}): deploy it with the WebhookReceiver construct`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    throw new Error('the configuration bundled with this function is not valid JSON', { cause: err });
  }
  const shipped = parsed as { resolved?: { routes?: unknown; queue?: unknown }; routeQueueNames?: unknown } | null;
  const names = shipped?.routeQueueNames;
  if (
    !Array.isArray(shipped?.resolved?.routes) ||
    typeof shipped.resolved.queue !== 'object' ||
    typeof names !== 'object' ||
    names === null ||
    Object.values(names).some((name) => typeof name !== 'string')
  ) {
    throw new Error('the configuration bundled with this function must be a JSON object of `resolved` (the resolved configuration) and `routeQueueNames` (queue names by route)');
  }
  return parsed as ShippedConfig;
}
