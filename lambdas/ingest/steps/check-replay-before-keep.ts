import type { DuplicateContext, Step } from '../ingest-context.ts';
import { replayAfterExpiry, replayedCapture } from './check-replay-memory.ts';
import { payloadUnkept } from './keep-payload.ts';

/**
 * Read before a duplicate keeps the payload: the first delivery may have died before its own
 * read, and a kept payload is work the reconciler may run (architecture.md#horizons-are-weeks-long).
 * Routes whose scheme signs no timestamp only.
 */
export const checkReplayBeforeKeep: Step<DuplicateContext> = async (ctx) => {
  if (!payloadUnkept(ctx.old)) return undefined;
  const takenAt = await replayedCapture(ctx.receiver.store, ctx.old);
  return takenAt === undefined ? undefined : replayAfterExpiry(ctx, takenAt);
};
