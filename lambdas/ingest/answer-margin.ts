import { CLOCK_SKEW_SECONDS, INGEST_TIMEOUT_SECONDS, takeoverMarginMs } from '../config/route-config.ts';

/**
 * How long after the instant a count starts from (`answeredAt`: the claim's own time when a
 * worker's lease starts it, a resend's mark otherwise; another machine's clock) a delivery must
 * arrive (ours) to have surely arrived after the answer: the ingest's whole life, after which no
 * answer of it can still go out, and twice the clock bound (architecture.md#circuit-breaker).
 */
export const ANSWER_MARGIN_MS = answerMarginMsFor(CLOCK_SKEW_SECONDS);

/** ANSWER_MARGIN_MS for a deployment's clock bound (maxClockSkewSeconds). */
export function answerMarginMsFor(clockSkewSeconds: number): number {
  return takeoverMarginMs(clockSkewSeconds) + INGEST_TIMEOUT_SECONDS * 1000;
}
