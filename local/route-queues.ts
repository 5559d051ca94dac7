/**
 * The local stand-ins for the routes' own queues (a route's `ownQueue`): one fauxqs queue per
 * isolated route and Region, named as the construct names them (lib/stateful/work-queue.ts,
 * routeQueueName: `<prefix>-work-<route>`, cut and suffixed with a digest past SQS's 80
 * characters), each dead-lettering into its Region's one DLQ at the shared queue's
 * maxReceiveCount. The local prefix is the Region's work queue: the first Region's
 * `retryproof-work` gives `retryproof-work-<route>`, as a deployed receiver named `retryproof`
 * would. Pure: no SDK; local-services.ts creates them.
 */
import { createHash } from 'node:crypto';
import type { ResolvedConfig, ResolvedRoute } from '../lambdas/config/resolve-config.ts';
import { SettingsError } from './settings-error.ts';

/** SQS's longest queue name (SQS API Reference, CreateQueue, QueueName: "up to 80 characters"). */
const SQS_QUEUE_NAME_MAX = 80;
/** Hex digits of the route name's SHA-256 that stand for a route name cut to fit, as the construct's. */
const NAME_DIGEST_LENGTH = 8;

/**
 * The local name of a route's own queue in the Region whose work queue is `regionQueue`.
 * The same rule as the construct's routeQueueName, with the Region's work queue standing for
 * `<prefix>-work`, so a name over 80 characters keeps the route's first characters and 8 hex
 * digits of its SHA-256.
 */
export function localRouteQueueName(regionQueue: string, route: string): string {
  const whole = `${regionQueue}-${route}`;
  if (whole.length <= SQS_QUEUE_NAME_MAX) return whole;
  const digest = createHash('sha256').update(route).digest('hex').slice(0, NAME_DIGEST_LENGTH);
  const room = SQS_QUEUE_NAME_MAX - regionQueue.length - 2 - NAME_DIGEST_LENGTH;
  return `${regionQueue}-${route.slice(0, room)}-${digest}`;
}

/** The routes whose work has a queue of its own, in the configuration's order. */
export function ownQueueRoutes(config: Pick<ResolvedConfig, 'routes'>): readonly ResolvedRoute[] {
  return config.routes.filter((r) => r.ownQueue);
}

/** One Region's work queue and the names of its routes' own queues, by route. */
export interface RegionQueueNames {
  /** The Region's shared work queue; its DLQ is `<queue>-dlq`. */
  readonly queue: string;
  /** Each isolated route's queue name, by route. */
  readonly routeQueues: ReadonlyMap<string, string>;
}

/**
 * Every Region's queue names. Region names and route names share one alphabet, so a route's
 * queue in the first Region could take the name of another Region's work queue (a route
 * `local-2-x` and a Region `local-2` with a route `x`): such a clash is refused, not shared.
 * @param regionQueues each Region's work queue name, the first Region's first
 * @throws SettingsError naming the two queues that would share a name
 */
export function regionQueueNames(regionQueues: readonly string[], config: Pick<ResolvedConfig, 'routes'>): RegionQueueNames[] {
  const owner = new Map<string, string>();
  const claim = (name: string, what: string): void => {
    const other = owner.get(name);
    if (other !== undefined) {
      throw new SettingsError(`${what} and ${other} would both be the local queue ${name}: rename the route, or name the regions otherwise (--regions)`);
    }
    owner.set(name, what);
  };
  for (const queue of regionQueues) {
    claim(queue, `the work queue ${queue}`);
    claim(`${queue}-dlq`, `the DLQ ${queue}-dlq`);
  }
  return regionQueues.map((queue) => {
    const routeQueues = new Map<string, string>();
    for (const route of ownQueueRoutes(config)) {
      const name = localRouteQueueName(queue, route.name);
      claim(name, `route ${route.name}'s own queue beside ${queue}`);
      routeQueues.set(route.name, name);
    }
    return { queue, routeQueues };
  });
}

/**
 * Batches a route's local event source runs at once: the route's `concurrency` (its own event
 * source's maxConcurrency when deployed), else what the shared queue's local event source runs.
 */
export function localRouteConcurrency(route: Pick<ResolvedRoute, 'concurrency'>, sharedLocalConcurrency: number): number {
  return route.concurrency ?? sharedLocalConcurrency;
}
