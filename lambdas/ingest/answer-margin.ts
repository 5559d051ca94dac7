import { CLOCK_SKEW_SECONDS, MARK_ANSWERED_MAX_MS, takeoverMarginMs } from '../config/route-config.ts';

/**
 * How long after an answer's mark (another machine's clock) a delivery must arrive (ours) to
 * have surely arrived after the answer: twice the clock bound, both clocks off by it in
 * opposite directions, and the mark's own longest time, after which the answer goes out.
 */
export const ANSWER_MARGIN_MS = answerMarginMsFor(CLOCK_SKEW_SECONDS);

/** ANSWER_MARGIN_MS for a deployment's clock bound (maxClockSkewSeconds). */
export function answerMarginMsFor(clockSkewSeconds: number): number {
  return takeoverMarginMs(clockSkewSeconds) + MARK_ANSWERED_MAX_MS;
}
