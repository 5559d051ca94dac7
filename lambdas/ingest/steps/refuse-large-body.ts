import { workMessageOf } from '../../domain/event-record.ts';
import { PayloadTooLargeError, UnqueueableBodyError } from '../../domain/errors.ts';
import { unqueueableReason } from '../../domain/queue-limits.ts';
import type { Step } from '../ingest-context.ts';

/**
 * No bucket in this receiver: a body above the claim-check threshold, or one SQS cannot carry,
 * has nowhere to go and is refused before anything is written
 * (architecture.md#large-bodies-and-ordering-per-entity). Receivers without a bucket only.
 */
export const refuseLargeBody: Step = (ctx) => {
  const { rawBody } = ctx.delivery;
  const { claimCheckAboveBytes } = ctx.route.config;
  if (rawBody.length > claimCheckAboveBytes) throw new PayloadTooLargeError(rawBody.length, claimCheckAboveBytes);
  const unqueueable = unqueueableReason(JSON.stringify(workMessageOf(ctx.record, ctx.payload, true)));
  if (unqueueable !== undefined) throw new UnqueueableBodyError(unqueueable);
  return undefined;
};
