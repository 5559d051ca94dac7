import { ClaimFailedError } from '../../ports/event-store.ts';
import { bookkeeping, dependency } from '../dependency.ts';
import type { Step } from '../ingest-context.ts';

/**
 * ONE conditional write claims the key: a new record, or the live one back with this delivery's
 * hit counted (architecture.md#the-idea, #every-write-can-be-ambiguous). A claim that failed
 * after attempts that may have committed takes their hits out of any count before the 5xx.
 */
export const claim: Step = async (ctx) => {
  const { store } = ctx.receiver;
  ctx.claim = await dependency('DynamoDB', async () => {
    try {
      return await store.claimKey(ctx.record, ctx.now);
    } catch (err) {
      if (err instanceof ClaimFailedError && err.uncertain > 0) await bookkeeping(() => store.excuseFailedClaim(ctx.record.route, ctx.record.key, err.uncertain));
      throw err;
    }
  });
  return undefined;
};
