/**
 * The circuit breaker. One key delivered more than its route's threshold means something
 * is wrong: acks that never arrive, a replay, a broken sender. For payments the safe
 * answer is to stop executing the route while still accepting and keeping every delivery.
 */
import type { ResolvedRoute } from '../config/resolve-config.ts';
import type { Notifier } from '../ports/notifier.ts';
import type { RouteStateStore } from '../ports/route-state-store.ts';

export interface BreakerDeps {
  readonly routeState: RouteStateStore;
  readonly notifier: Notifier;
}

export type BreakerOutcome = 'paused' | 'already-paused' | 'alerted';

/**
 * True for the one delivery that crosses the threshold. `hits` comes from an atomic
 * counter, so exactly one caller sees each value: one trip per key, however many copies
 * arrive at once. After an operator resumes, the same key does not pause the route
 * again; a new key that crosses does.
 */
export function crossesThreshold(route: ResolvedRoute, hits: number | undefined): boolean {
  return hits === route.breakerThreshold + 1;
}

export async function tripBreaker(
  deps: BreakerDeps,
  route: ResolvedRoute,
  key: string,
  hits: number,
  now: number,
): Promise<BreakerOutcome> {
  const reason = `key "${key}" was delivered ${hits} times, over the route's threshold of ${route.breakerThreshold}`;
  const notice = { route: route.name, key, hits, threshold: route.breakerThreshold, at: new Date(now).toISOString() };
  if (route.breakerReaction === 'alert') {
    await deps.notifier.notify(`retryproof: duplicate alert on route ${route.name}`, { ...notice, reason, reaction: 'alert' });
    return 'alerted';
  }
  const paused = await deps.routeState.pause(route.name, { reason, key, at: now, by: 'circuit-breaker' });
  if (!paused) return 'already-paused';
  await deps.notifier.notify(`retryproof: route ${route.name} paused`, {
    ...notice,
    reason,
    reaction: 'pause',
    whatNow: `Work on this route is parked, not lost. Find out why the key keeps coming back, then: npx retryproof --stack <name> routes resume ${route.name}`,
  });
  return 'paused';
}
