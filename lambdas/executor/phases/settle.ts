import { PermanentActionError } from '../../actions/action.ts';
import type { Gate } from '../message-context.ts';
import { complete } from './complete.ts';
import { failAfterRun } from './fail.ts';
import { giveSlotBack, release } from './release.ts';
import { SlotMissedError } from './run.ts';

/**
 * The run's end, each write fenced by the lease token: complete, give a missed rate slot back,
 * release for a retry, or fail with a dead-letter copy once the record's own budget is spent
 * (never the message's receive count: docs/architecture.md#the-retry-budget-and-the-dlq).
 */
export const settle: Gate = (ctx) => {
  const { ran } = ctx;
  if ('result' in ran) return complete(ctx, ran.result);
  if (ran.error instanceof SlotMissedError) return giveSlotBack(ctx);
  const permanent = ran.error instanceof PermanentActionError;
  const exhausted = !permanent && ctx.lease.record.attempts >= ctx.route.maxAttempts;
  return permanent || exhausted ? failAfterRun(ctx, ran.error, permanent) : release(ctx, ran.error);
};
