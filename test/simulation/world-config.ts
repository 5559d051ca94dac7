/**
 * The routes and the configuration of a run, resolved as synth resolves them: two routes on a
 * scheme that signs no timestamp, one pausing on a storm of one key, one only alerting, and two
 * whose senders re-sign every retry (Standard Webhooks and Stripe).
 */
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { ResolvedConfig, ResolvedRoute } from '../../lambdas/config/resolve-config.ts';
import { OUTAGE_HORIZON_SECONDS, backstopReceiveCount, outageReceiveCount } from '../../lambdas/config/route-config.ts';
import type { RouteConfig } from '../../lambdas/config/route-config.ts';
import { ACTION_TIME_SECONDS, DAY, HMAC, MAX_ATTEMPTS, PAY_BODY_LIMIT, SETTLE_SECONDS, SMALL_BODY_LIMIT, STUCK_AFTER_SECONDS, ST_ACTION_TIME } from './sim-constants.ts';
import { ROUTE_NAMES } from './world.ts';
import type { World } from './world.ts';

/** The run's routes and their resolved configuration, with the seed's queue settings and TTL. */
export function configure(w: World): void {
  const common = {
    action: 'simpay',
    actionTimeSeconds: ACTION_TIME_SECONDS,
    maxAttempts: MAX_ATTEMPTS,
    ...(w.shape.claimCheck.all ? { claimCheckAboveBytes: 0 } : {}),
  } as const;
  const { actionTimeSeconds: _one, ...untimed } = common;
  const routeConfigs: RouteConfig[] = [
    // The body signs the order id, so the key comes from it (a header would be unsigned).
    {
      ...common,
      name: ROUTE_NAMES.pay,
      signature: HMAC,
      key: '{body:/order}',
      secretName: 'sim/pay',
      breakerThreshold: 6,
      breakerReaction: 'pause',
      maxBodyBytes: PAY_BODY_LIMIT,
      ...(w.shape.rate === undefined ? {} : { rateLimit: w.shape.rate.limit, ownQueue: w.shape.rate.ownQueue }),
      ...(w.shape.ordered ? { orderBy: '{body:/customer}' } : {}),
    },
    // The alerting route trips on a third delivery, so outages and repeats often meet there.
    { ...common, name: ROUTE_NAMES.alt, signature: HMAC, key: '{body:/order}', secretName: 'sim/alt', breakerThreshold: 2, breakerReaction: 'alert', maxBodyBytes: SMALL_BODY_LIMIT },
    { ...common, name: ROUTE_NAMES.sw, signature: { scheme: 'standard-webhooks' }, secretName: 'sim/sw', breakerThreshold: 3, breakerReaction: 'pause' },
    // Stripe's route leases by the payout's destination (6, 9 or 15 s): each record its own,
    // the longest the same as the other routes', so the executor's timeout is theirs too.
    { ...untimed, name: ROUTE_NAMES.st, signature: { scheme: 'stripe' }, secretName: 'sim/st', breakerThreshold: 3, breakerReaction: 'alert', actionTime: ST_ACTION_TIME },
  ];
  const configOf = (routes: readonly RouteConfig[]): ResolvedConfig =>
    resolveConfig({
      routes: [...routes],
      reconciliation: { stuckAfterSeconds: STUCK_AFTER_SECONDS, settleSeconds: SETTLE_SECONDS },
      // Several Regions on one MRSC table: no TTL, so the scheduled runs sweep expired items.
      ...(w.regionCount > 1 ? { regions: { replicas: ['us-east-1', 'us-east-2'], witness: 'us-west-2' } } : {}),
    });
  // A short TTL: the shortest whole number of days that passes every route's cover check, as
  // resolveConfig applies it at synth (a TTL below a route's cover throws there).
  const shortTtlSeconds = (resolved: ResolvedConfig): number => {
    const daySeconds = DAY / 1000;
    return Math.ceil(Math.max(...resolved.routes.map((r) => r.coverSeconds)) / daySeconds) * daySeconds;
  };
  const defaults = configOf(routeConfigs);
  const resolved = w.shape.shortTtl ? configOf(routeConfigs.map((r) => ({ ...r, ttlSeconds: shortTtlSeconds(defaults) }))) : defaults;
  w.config = {
    ...resolved,
    queue: {
      ...resolved.queue,
      visibilityTimeoutSeconds: w.shape.visibilityTimeoutSeconds,
      resendAfterSeconds: w.shape.visibilityTimeoutSeconds + 60,
      // Sized for this visibility timeout, as resolveConfig sizes it for the deployed one: a
      // backstop plus the receives a day-long outage spends at the dependency backoff, which
      // doubles from the visibility timeout (15 to 17 receives from 1 to 5 s, 10 from 150 s).
      maxReceiveCount:
        Math.max(...resolved.routes.map((r) => backstopReceiveCount(r.maxAttempts))) +
        outageReceiveCount(OUTAGE_HORIZON_SECONDS, w.shape.visibilityTimeoutSeconds, resolved.executorTimeoutSeconds),
    },
  };
  w.routes = new Map<string, ResolvedRoute>(w.config.routes.map((r) => [r.name, r]));
  w.resendAfterMs = w.config.queue.resendAfterSeconds * 1000;
}
