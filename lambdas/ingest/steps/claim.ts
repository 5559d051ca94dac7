import { dependency } from '../dependency.ts';
import type { Step } from '../ingest-context.ts';

/**
 * ONE conditional write claims the key: a new record, or the live one back with this delivery's
 * hit counted (architecture.md#the-idea, #every-write-can-be-ambiguous).
 */
export const claim: Step = async (ctx) => {
  ctx.claim = await dependency('DynamoDB', () => ctx.receiver.store.claimKey(ctx.record, ctx.now));
  return undefined;
};
