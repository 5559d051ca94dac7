import { bookkeeping } from '../dependency.ts';
import type { DuplicateContext, Step } from '../ingest-context.ts';

/**
 * A repeat is a copy that arrived more than the answer margin after the mark, by both clocks; a
 * copy claimed after the mark that may have arrived before the answer, or whose claim the SDK
 * re-sent, is excused: a missed count, never a false one (architecture.md#circuit-breaker).
 */
export const countRepeats: Step<DuplicateContext> = async (ctx) => {
  const { receiver, route, key, claim, old, now } = ctx;
  const attempts = claim.attempts ?? 1;
  const afterAnswer = claim.answered && attempts === 1 && now > (claim.answeredAt ?? Number.POSITIVE_INFINITY) + receiver.answerMarginMs;
  ctx.repeats = afterAnswer ? (old.repeats ?? 0) + 1 : undefined;
  const { answeredAt } = claim;
  if (claim.answered && !afterAnswer && answeredAt !== undefined) {
    ctx.counted = await bookkeeping(() => receiver.store.excuseRacingCopy(route.config.name, key, old.receivedAt, answeredAt, attempts));
  }
  return undefined;
};
