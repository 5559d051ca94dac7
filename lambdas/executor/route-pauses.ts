import type { RouteStateStore } from '../ports/route-state-store.ts';

/** Whether a route is paused, as the executor asks before it runs a route's work. */
export interface RoutePauses {
  isPaused(route: string): Promise<boolean>;
}

export interface RoutePauseCacheOptions {
  /** How old a route's state may be when a worker decides on it, in ms (ROUTE_STATE_MAX_AGE_MS when deployed). */
  readonly maxAgeMs: number;
  /** The container's monotonic clock, in ms (performance.now): a wall clock's step must not make a state look young. */
  readonly monotonicNow: () => number;
}

/**
 * Route states cached per container: a worker at rest reads its route's state once every
 * maxAgeMs, not once per batch, so a pause reaches the workers up to that late
 * (architecture.md#a-pause-reaches-the-workers-late). Each read's age counts from when it was
 * asked, and a failed read is forgotten. A stale "paused" loses nothing: park reads the route's
 * state again after its write, takes the record back and answers route-active.
 */
export class RoutePauseCache implements RoutePauses {
  readonly #states: RouteStateStore;
  readonly #options: RoutePauseCacheOptions;
  readonly #cache = new Map<string, { readonly askedAtMs: number; readonly paused: Promise<boolean> }>();

  constructor(states: RouteStateStore, options: RoutePauseCacheOptions) {
    this.#states = states;
    this.#options = options;
  }

  isPaused(route: string): Promise<boolean> {
    const nowMs = this.#options.monotonicNow();
    const cached = this.#cache.get(route);
    if (cached !== undefined && nowMs - cached.askedAtMs < this.#options.maxAgeMs) return cached.paused;
    const entry = { askedAtMs: nowMs, paused: this.#states.get(route).then((s) => s.state === 'paused') };
    this.#cache.set(route, entry);
    entry.paused.catch(() => {
      if (this.#cache.get(route) === entry) this.#cache.delete(route);
    });
    return entry.paused;
  }
}
