/**
 * Invariant: a pause reaches the workers within ROUTE_STATE_MAX_AGE_MS
 * (docs/architecture.md#a-pause-reaches-the-workers-late). A worker that decides a route is
 * active, that long or longer after a pause of it was answered and before anyone asked to
 * resume it, ran work a paused route must keep. A pause that overlapped a resume is not timed:
 * the resume's write may land after it, and then the route is active.
 */
import type { RouteStateStore } from '../../lambdas/ports/route-state-store.ts';
import type { RoutePauses } from '../../lambdas/executor/route-pauses.ts';

export class PauseReach {
  /** Per route, the true time a pause of it was first answered, while no resume was asked since. */
  readonly #pausedSince = new Map<string, number>();
  /** Per route, the resumes in flight, and when the last one ended (true time). */
  readonly #resuming = new Map<string, { inFlight: number; endedAt: number }>();
  readonly #trueNow: () => number;
  readonly #maxAgeMs: number;
  readonly #violations: string[];

  constructor(options: { trueNow: () => number; maxAgeMs: number; violations: string[] }) {
    this.#trueNow = options.trueNow;
    this.#maxAgeMs = options.maxAgeMs;
    this.#violations = options.violations;
  }

  /** A route-state store whose pauses start the clock (once answered: paused either way) and whose resumes stop it (once asked). */
  observe<T extends RouteStateStore>(store: T): T {
    const pause: RouteStateStore['pause'] = async (route, request) => {
      const startedAt = this.#trueNow();
      const out = await store.pause(route, request);
      const resuming = this.#resuming.get(route);
      const overlapped = resuming !== undefined && (resuming.inFlight > 0 || resuming.endedAt >= startedAt);
      if (!overlapped && !this.#pausedSince.has(route)) this.#pausedSince.set(route, this.#trueNow());
      return out;
    };
    const resume: RouteStateStore['resume'] = async (route, at) => {
      this.#pausedSince.delete(route);
      const resuming = this.#resuming.get(route) ?? { inFlight: 0, endedAt: 0 };
      this.#resuming.set(route, resuming);
      resuming.inFlight++;
      try {
        return await store.resume(route, at);
      } finally {
        resuming.inFlight--;
        resuming.endedAt = this.#trueNow();
      }
    };
    return new Proxy(store, {
      get: (target, prop, receiver): unknown => {
        if (prop === 'pause') return pause;
        if (prop === 'resume') return resume;
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** The executor's pauses, each "active" checked against the pauses observed. */
  check(pauses: RoutePauses): RoutePauses {
    return {
      isPaused: async (route) => {
        const askedAt = this.#trueNow();
        const paused = await pauses.isPaused(route);
        const since = this.#pausedSince.get(route);
        if (!paused && since !== undefined && askedAt - since >= this.#maxAgeMs) {
          this.#violations.push(`${route}: a worker took the route for active ${String(askedAt - since)} ms after its pause was answered (a pause must reach the workers within ${String(this.#maxAgeMs)} ms)`);
        }
        return paused;
      },
    };
  }
}
