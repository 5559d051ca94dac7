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
  /**
   * The command a person runs to resume a route, for the notice.
   * @default - the deployed form, `npx retryproof --stack <name> routes resume <route>`
   */
  readonly resumeCommand?: (route: string) => string;
}

export type BreakerOutcome = 'paused' | 'already-paused' | 'alerted';

/** One key's trip: the repeat that crossed the threshold. */
export interface BreakerTrip {
  readonly route: ResolvedRoute;
  readonly key: string;
  /** Deliveries of the key after we had answered it 2xx: what the breaker counts. */
  readonly repeats: number;
  readonly nowMs: number;
  /** Marks the key's record as tripped; true for the one caller that did (markBreakerTripped). */
  readonly markTripped: () => Promise<boolean>;
}

/** What a trip did. A notice that failed is reported, not thrown: the pause and its metric stand. */
export interface BreakerResult {
  readonly outcome: BreakerOutcome;
  /** Set when the pause (or alert) notice could not be sent; the RoutePaused alarm still fires. */
  readonly noticeError?: unknown;
}

/**
 * True when this delivery must trip the breaker: the key came back after a 2xx as often as
 * the threshold, and its record has not tripped yet. Retries of our own 5xx (a DynamoDB or
 * SQS outage) are not counted: they are our failure, not the sender's repeat.
 *
 * `repeats` comes from an atomic counter, so exactly one delivery sees each value: the one
 * at the threshold trips, once per key however many copies arrive at once. A trip that died
 * before its mark (the pause write failed, the function was killed) is retried by one
 * delivery in every threshold + 1 after it, never by every copy of a burst. After an
 * operator resumes, the same key does not pause the route again; a new key that crosses does.
 */
export function crossesThreshold(route: ResolvedRoute, repeats: number, trippedAt: number | undefined): boolean {
  if (trippedAt !== undefined || repeats < route.breakerThreshold) return false;
  return (repeats - route.breakerThreshold) % (route.breakerThreshold + 1) === 0;
}

/**
 * Pauses the route (or only alerts), then marks the key, then notifies. The order makes the
 * notice hard to lose: the pause write comes first, so the route stops even when the rest
 * fails; the caller counts RoutePaused from the returned outcome whatever the notice did;
 * and a trip that died before its mark is retried (see crossesThreshold).
 */
export async function tripBreaker(deps: BreakerDeps, trip: BreakerTrip): Promise<BreakerResult> {
  const { route, key, repeats, nowMs } = trip;
  const reason =
    `key "${key}" came back ${repeats} times after we had answered it (${repeats + 1} deliveries), ` +
    `reaching the route's threshold of ${route.breakerThreshold}`;
  const notice = { route: route.name, key, repeats, threshold: route.breakerThreshold, at: new Date(nowMs).toISOString(), reason };
  let outcome: BreakerOutcome = 'alerted';
  if (route.breakerReaction === 'pause') {
    const paused = await deps.routeState.pause(route.name, { reason, key, at: nowMs, by: 'circuit-breaker' });
    outcome = paused ? 'paused' : 'already-paused';
  }
  // Of concurrent repeats, the one that marks the key sends the notice.
  if (!(await trip.markTripped())) return { outcome };
  // A route paused already (by another key, or by a person) needs no notice per key that
  // crosses; only a retried trip of the key that paused it, whose notice may be lost, sends one.
  if (outcome === 'already-paused' && (await deps.routeState.get(route.name)).key !== key) return { outcome };
  const resume = deps.resumeCommand ?? ((name: string) => `npx retryproof --stack <name> routes resume ${name}`);
  try {
    if (outcome === 'alerted') {
      await deps.notifier.notify(`retryproof: duplicate alert on route ${route.name}`, { ...notice, reaction: 'alert' });
    } else {
      await deps.notifier.notify(`retryproof: route ${route.name} paused`, {
        ...notice,
        reaction: 'pause',
        whatNow: `Work on this route is parked, not lost. Find out why the key keeps coming back, then: ${resume(route.name)}`,
      });
    }
  } catch (noticeError) {
    return { outcome, noticeError };
  }
  return { outcome };
}
