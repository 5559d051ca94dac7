/**
 * The circuit breaker. One key delivered more than its route's threshold means something
 * is wrong: acks that never arrive, a replay, a broken sender. For payments the safe
 * answer is to stop executing the route while still accepting and keeping every delivery.
 */
import type { ResolvedRoute } from '../config/resolve-config.ts';
import type { RouteStateStore } from '../ports/route-state-store.ts';

export interface BreakerDeps {
  readonly routeState: RouteStateStore;
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

/**
 * What a person needs to know of a trip: the ingest logs it (`circuit breaker tripped`), the
 * route state keeps it (`routes list`), and the RoutePaused alarm (BreakerTripped on an
 * alerting route) tells the alarm topic, whose description points to both.
 */
export interface BreakerNotice {
  readonly subject: string;
  readonly route: string;
  readonly key: string;
  readonly repeats: number;
  readonly threshold: number;
  /** ISO instant of the trip. */
  readonly at: string;
  readonly reason: string;
  readonly reaction: 'pause' | 'alert';
  /** What to do, with the command that resumes the route (a pause only). */
  readonly whatNow?: string;
}

/** What a trip did. */
export interface BreakerResult {
  readonly outcome: BreakerOutcome;
  /**
   * The notice, for the one delivery that announces this trip: the one that marked the key,
   * unless the route was paused already by another key (or by a person), which needs no
   * announcement per key. A retried trip of the key that paused the route announces again:
   * the first announcement may have died with its function.
   */
  readonly notice?: BreakerNotice;
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
 * Pauses the route (or only alerts), then marks the key, then returns the notice to
 * announce. The order makes the announcement hard to lose: the pause write comes first, so
 * the route stops even when the rest fails; the caller counts RoutePaused (the alarm) from
 * the returned outcome; and a trip that died before its mark is retried (see crossesThreshold).
 * No notice is sent from here: the alarm on the metric tells the topic, so the ingest needs
 * no client for it.
 */
export async function tripBreaker(deps: BreakerDeps, trip: BreakerTrip): Promise<BreakerResult> {
  const { route, key, repeats, nowMs } = trip;
  const reason =
    `key "${key}" came back ${repeats} times after we had answered it (${repeats + 1} deliveries), ` +
    `reaching the route's threshold of ${route.breakerThreshold}`;
  const resume = deps.resumeCommand ?? ((name: string) => `npx retryproof --stack <name> routes resume ${name}`);
  const common = { route: route.name, key, repeats, threshold: route.breakerThreshold, at: new Date(nowMs).toISOString(), reason };
  const notice: BreakerNotice =
    route.breakerReaction === 'pause'
      ? {
          subject: `retryproof: route ${route.name} paused`,
          ...common,
          reaction: 'pause',
          whatNow: `Work on this route is parked, not lost. Find out why the key keeps coming back, then: ${resume(route.name)}`,
        }
      : { subject: `retryproof: duplicate alert on route ${route.name}`, ...common, reaction: 'alert' };
  let outcome: BreakerOutcome = 'alerted';
  if (route.breakerReaction === 'pause') {
    const paused = await deps.routeState.pause(route.name, {
      reason,
      key,
      at: nowMs,
      by: 'circuit-breaker',
      repeats,
      threshold: route.breakerThreshold,
      ...(notice.whatNow === undefined ? {} : { whatNow: notice.whatNow }),
    });
    outcome = paused ? 'paused' : 'already-paused';
  }
  // Of concurrent repeats, the one that marks the key announces the trip.
  if (!(await trip.markTripped())) return { outcome };
  // A route paused already (by another key, or by a person) needs no announcement per key
  // that crosses; only a retried trip of the key that paused it, whose announcement may be lost, makes one.
  if (outcome === 'already-paused' && (await deps.routeState.get(route.name)).key !== key) return { outcome };
  return { outcome, notice };
}
