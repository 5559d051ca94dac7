import type { ResolvedRateLimit } from '../config/resolve-config.ts';

/** The gate's answer for one run of a rate-limited route. */
export type RateDecision =
  /** The run may start now: no admission of the route was less than the limit's interval ago. */
  | { readonly admitted: true }
  /**
   * Not yet: the work waits in the queue and comes back at `retryAtMs` (by the caller's clock),
   * its turn among the route's waiting work. The gate promises nothing about that instant: the
   * run that comes back asks again.
   */
  | { readonly admitted: false; readonly retryAtMs: number };

/**
 * A route's rate limit, shared by every executor instance: admissions are spaced at least the
 * limit's interval apart (a limit of n per unit is one admission every unit / n), so no window of
 * the unit ever holds more than n.
 */
export interface RateGate {
  admit(route: string, limit: ResolvedRateLimit, nowMs: number): Promise<RateDecision>;
}
