import type { DuplicateContext, Step } from '../ingest-context.ts';
import { markAnswer } from '../mark-answer.ts';

/**
 * This copy sent the work again and is about to be answered below 500, and no count ran when it
 * came: the count starts again here, as a worker's lease starts it for a new delivery
 * (architecture.md#circuit-breaker). Where one ran, only the excuse was written.
 */
export const markDuplicate: Step<DuplicateContext> = async (ctx) => {
  if (ctx.claim.answered) ctx.marked = ctx.counted;
  else if (ctx.resent) ctx.marked = await markAnswer(ctx, ctx.old);
  return undefined;
};
