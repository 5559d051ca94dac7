import { Duration } from 'aws-cdk-lib';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { ResolvedConfig, ResolvedRoute } from '../../lambdas/config/resolve-config.ts';
import { SQS_MAX_DELAY_SECONDS } from '../../lambdas/config/route-config.ts';

/** SQS publishes its queue metrics once a minute. */
export const QUEUE_PERIOD = Duration.minutes(1);

/**
 * Days a dead letter may wait before its alarm: half the DLQ's 14, so a week is left before SQS
 * deletes it (a dead letter's expiry counts from its first send, "Using dead-letter queues in
 * Amazon SQS", SQS Developer Guide).
 */
export const DLQ_OLDEST_DAYS = 7;

/**
 * The age past which a queue's oldest message is work nobody is picking up, and where the
 * number comes from. An ordinary retry hides its message for the whole visibility timeout, and
 * a locked hand-back for what is left of a lease, so a message that is merely being retried
 * grows old: up to its route's retry budget of attempts, each a lease plus a visibility
 * timeout. A rate-limited route's work may also wait out one deferral: a wake-up sent with
 * DelaySeconds, at most 900 s (SQS API Reference, SendMessage), that the gate sends again, as
 * a new message, when its turn has still not come. The metric's definition ("the age of the
 * oldest non-deleted message", SQS Developer Guide, "Available CloudWatch metrics for Amazon
 * SQS") does not say whether a message still delayed counts, so the limit leaves room for one.
 */
export interface AgeLimit {
  readonly seconds: number;
  /** The route whose budget it is. */
  readonly route: ResolvedRoute;
  /** The route's retry budget: maxAttempts x (lease + visibility timeout). */
  readonly retrySeconds: number;
  /** One deferral's longest wait when the route has a rate limit, else 0. */
  readonly deferralSeconds: number;
}

/** A work queue as the alarms and the dashboard watch it. */
export interface WatchedQueue {
  readonly queue: IQueue;
  /** The route whose own queue it is; undefined for the shared queue. */
  readonly owner: ResolvedRoute | undefined;
  /** The routes whose work it carries (for the shared one: every route without a queue of its own). */
  readonly routes: readonly ResolvedRoute[];
  /** How a person reads it on the dashboard: `shared queue (demo, stripe)`, `route orders`. */
  readonly label: string;
  readonly ageLimit: AgeLimit;
}

/**
 * The shared work queue first, then each route's own queue in the configuration's order. The
 * shared queue's age limit is over the routes it carries; with none (every route has its own),
 * over all of them, for the work still on it from before they moved.
 */
export function watchedQueues(resolved: ResolvedConfig, queue: IQueue, routeQueues: ReadonlyMap<string, IQueue>): WatchedQueue[] {
  const onShared = resolved.routes.filter((r) => !routeQueues.has(r.name));
  const isolated = routeQueues.size > 0;
  const shared: WatchedQueue = {
    queue,
    owner: undefined,
    routes: onShared,
    // Without routes of their own, the one queue is just "queue", as it always was.
    label: !isolated ? 'queue' : `shared queue (${onShared.length === 0 ? 'no route' : onShared.map((r) => r.name).join(', ')})`,
    ageLimit: ageLimitOf(onShared.length === 0 ? resolved.routes : onShared, resolved.queue.visibilityTimeoutSeconds),
  };
  const own = resolved.routes.flatMap((route): WatchedQueue[] => {
    const q = routeQueues.get(route.name);
    return q === undefined ? [] : [{ queue: q, owner: route, routes: [route], label: `route ${route.name}`, ageLimit: ageLimitOf([route], resolved.queue.visibilityTimeoutSeconds) }];
  });
  return [shared, ...own];
}

/** The longest of the routes' age limits. */
function ageLimitOf(routes: readonly ResolvedRoute[], visibilityTimeoutSeconds: number): AgeLimit {
  return routes
    .map((route): AgeLimit => {
      const retrySeconds = route.maxAttempts * (route.leaseSeconds + visibilityTimeoutSeconds);
      const deferralSeconds = route.rateLimit === undefined ? 0 : SQS_MAX_DELAY_SECONDS;
      return { seconds: retrySeconds + deferralSeconds, route, retrySeconds, deferralSeconds };
    })
    .reduce((a, b) => (b.seconds > a.seconds ? b : a));
}

/**
 * The age limit as its alarm explains it: `1875 s: route "demo"'s 5 attempts, each a 45 s
 * lease plus the 330 s visibility timeout`, and the deferral when there is one.
 */
export function ageLimitText(limit: AgeLimit, visibilityTimeoutSeconds: number): string {
  const { route } = limit;
  return (
    `${limit.seconds} s: route "${route.name}"'s ${route.maxAttempts} attempts, each a ${route.leaseSeconds} s lease ` +
    `plus the ${visibilityTimeoutSeconds} s visibility timeout` +
    (limit.deferralSeconds === 0 ? '' : `, and one ${limit.deferralSeconds} s wait for its rate limit of ${route.rateLimit?.text ?? ''}`)
  );
}
