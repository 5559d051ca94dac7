import { RECORD_STATUS } from '../../domain/event-record.ts';
import type { EventRecord } from '../../domain/event-record.ts';
import { dependency } from '../dependency.ts';
import type { DuplicateContext, Step } from '../ingest-context.ts';
import { sendOrRecordFailure } from './send-work.ts';

/**
 * Work whose message may be lost is sent again by the one duplicate that wins claimResend; the
 * same fingerprint means this copy's payload is the record's (architecture.md#record-states).
 */
export const resend: Step<DuplicateContext> = async (ctx) => {
  const { receiver, route, key, accepted, claim, old, now, answeredFailure } = ctx;
  if (!mayHaveLostItsMessage(old, now, receiver.resendAfterMs)) return undefined;
  const request = { receivedAt: old.receivedAt, nowMs: now, sentBeforeMs: now - receiver.resendAfterMs, answer: accepted, answeredFailure };
  ctx.resent = await dependency('DynamoDB', () => receiver.store.claimResend(route.config.name, key, request));
  if (ctx.resent) await sendOrRecordFailure(receiver, old, ctx.payload, { counting: claim.answered });
  return undefined;
};

/**
 * Whether a duplicate should try to re-send (the write in claimResend decides): the record
 * waits to run but its last message is older than the window, or our first send failed.
 */
function mayHaveLostItsMessage(record: EventRecord, nowMs: number, windowMs: number): boolean {
  const before = nowMs - windowMs;
  const lastSent = record.lastEnqueuedAt ?? record.receivedAt;
  if (record.status === RECORD_STATUS.received) return record.answer.status >= 500 || lastSent < before;
  return record.status === RECORD_STATUS.executing && (record.leaseUntil ?? 0) < before && lastSent < before;
}
