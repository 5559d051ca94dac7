import type { ResolvedRateLimit } from '../config/resolve-config.ts';

/**
 * How late after its slot a run may still start. A route limited to n per unit gets slots
 * `interval + START_TOLERANCE_MS / n` apart (rateSlotStepMs), so n + 1 starts, each at most this
 * late, never fit in one unit: "no more than n in any window of the unit" holds for the action's
 * starts, not only for the gate's admissions. A run that would start later gives its slot up.
 */
export const RATE_START_TOLERANCE_MS = 50;

/**
 * The longest a run waits in its invocation for a slot the gate gave it. A slot further away is
 * refused: the work waits in the queue (a delayed wake-up), not in a paid invocation.
 */
export const RATE_WAIT_MAX_MS = 2_000;

/** The spacing of a limit's slots: its interval, plus the start tolerance spread over the n of a unit. */
export function rateSlotStepMs(limit: Pick<ResolvedRateLimit, 'intervalMs' | 'count'>): number {
  return limit.intervalMs + Math.ceil(RATE_START_TOLERANCE_MS / limit.count);
}

/** Where a slot may fall, from the instant the caller asks. */
export interface SlotWindow {
  /** The earliest slot: far enough ahead that the caller's writes before the start (its lease) are answered by then. */
  readonly leadMs: number;
  /** The latest slot the caller will wait for in its invocation (at least leadMs). */
  readonly maxWaitMs: number;
}

/** The gate's answer for one run of a rate-limited route. */
export type RateDecision =
  /**
   * The run may start at `startAtMs` (by the caller's clock: between now + leadMs and
   * now + maxWaitMs), and no later than RATE_START_TOLERANCE_MS after it.
   */
  | { readonly admitted: true; readonly startAtMs: number }
  /**
   * Not yet: the work waits in the queue and comes back at `retryAtMs` (by the caller's clock),
   * its turn among the route's waiting work. The gate promises nothing about that instant: the
   * run that comes back asks again.
   */
  | { readonly admitted: false; readonly retryAtMs: number };

/**
 * A route's rate limit, shared by every executor instance: it hands out start slots at least
 * rateSlotStepMs apart, so no window of the limit's unit ever holds more than n starts.
 */
export interface RateGate {
  admit(route: string, limit: ResolvedRateLimit, nowMs: number, window: SlotWindow): Promise<RateDecision>;
}
