/**
 * How far ahead of now a rate-limited run asks the gate for its start slot: far enough that the
 * gate's answer and the lease write (and, on a scheme without a signed timestamp, the replay
 * memory's) are back before the slot, so the run starts at it and not late. One per executor
 * instance, learnt from what those writes took on its recent runs: twice their moving average,
 * within [MIN_LEAD_MS, MAX_LEAD_MS]. A run that still comes back late gives its slot up (and the
 * next one asks further ahead), so a lead too short costs a wait, never a start over the limit.
 */
export const MIN_LEAD_MS = 20;
export const MAX_LEAD_MS = 1_000;
const FIRST_LEAD_MS = 200;
/** The weight of the newest observation in the moving average. */
const WEIGHT = 0.3;

export class StartLead {
  #averageMs = FIRST_LEAD_MS / 2;

  /** The lead to ask for now. */
  ms(): number {
    return Math.min(MAX_LEAD_MS, Math.max(MIN_LEAD_MS, Math.ceil(2 * this.#averageMs)));
  }

  /** What one run's writes before its start took, from asking the gate to being ready to start. */
  observe(elapsedMs: number): void {
    if (!Number.isFinite(elapsedMs) || elapsedMs < 0) return;
    this.#averageMs = (1 - WEIGHT) * this.#averageMs + WEIGHT * elapsedMs;
  }
}
