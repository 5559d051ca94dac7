import { dependency } from '../dependency.ts';
import { crossesThreshold, tripBreaker } from '../circuit-breaker.ts';
import type { BreakerDeps } from '../circuit-breaker.ts';
import type { DuplicateContext, Step } from '../ingest-context.ts';

/**
 * A key repeated after our 2xx as often as the route's threshold pauses the route (or alerts),
 * once per key (architecture.md#circuit-breaker). Receivers with a breaker only.
 */
export function tripOnThreshold(breaker: BreakerDeps): Step<DuplicateContext> {
  return async (ctx) => {
    const { receiver, route: { config }, key, repeats, old, now } = ctx;
    if (repeats === undefined || !crossesThreshold(config, repeats, old.breakerTrippedAt)) return undefined;
    const markTripped = (): Promise<boolean> => receiver.store.markBreakerTripped(config.name, key, old.receivedAt, now);
    ctx.breaker = await dependency('circuit breaker', () => tripBreaker(breaker, { route: config, key, repeats, nowMs: now, markTripped }));
    return undefined;
  };
}
