/** The reports more than one gate or phase gives: fenced out, locked, and a record in the way. */
import type { LeaseOutcome } from '../ports/execution-store.ts';
import { sendDeadLetter } from './dead-letter.ts';
import { moveLine } from './entity-line.ts';
import { EXECUTION_OUTCOME } from './execution-report.ts';
import type { ExecutionReport } from './execution-report.ts';
import type { MessageContext } from './message-context.ts';

/** What a record that stands in the way of a write before the lease can be. */
export type BlockedOutcome = Exclude<LeaseOutcome, { kind: 'leased' } | { kind: 'exhausted' }>;

/** Up to this many seconds are added to a locked hand-back, so waiting copies do not all come back at once. */
const LOCKED_JITTER_SECONDS = 2;

/** The reason of a message whose body does not hash to its record's fingerprint. */
const FORGED_REASON = "the body does not match the delivery's fingerprint (SHA-256): it was not sent by retryproof";

/** Another worker's write won: this message may be the only one left, so it goes back (docs/architecture.md#every-write-can-be-ambiguous). */
export function fencedOut(ctx: MessageContext, attempt: number | undefined, error?: string): ExecutionReport {
  return {
    ...ctx.about,
    ...(attempt === undefined ? {} : { attempt }),
    outcome: EXECUTION_OUTCOME.fencedOut,
    ack: false,
    ...(error === undefined ? {} : { error }),
  };
}

/** Locked is not a failure: back just after the lease ends, to take over if its worker died (docs/architecture.md#record-states). */
export function lockedUntil(ctx: MessageContext, leaseUntil: number | undefined): ExecutionReport {
  const { executor } = ctx;
  const waitMs = Math.max(0, (leaseUntil ?? 0) + executor.takeoverMarginMs - executor.now());
  const jitter = executor.random() * LOCKED_JITTER_SECONDS;
  return { ...ctx.about, outcome: EXECUTION_OUTCOME.locked, ack: false, visibilitySeconds: Math.max(1, Math.ceil(waitMs / 1000 + jitter)) };
}

/** The record stood in the way of a write before the lease: done, failed, leased by another, gone, or not this body's. */
export async function blockedBy(ctx: MessageContext, blocked: BlockedOutcome): Promise<ExecutionReport> {
  switch (blocked.kind) {
    case 'completed':
      await moveLine(ctx);
      return { ...ctx.about, outcome: EXECUTION_OUTCOME.duplicate, ack: true };
    case 'failed':
      return { ...ctx.about, outcome: EXECUTION_OUTCOME.failedAlready, ack: true };
    case 'locked':
      return lockedUntil(ctx, blocked.record.leaseUntil);
    case 'missing':
      return sendDeadLetter(ctx, 'record expired before execution', EXECUTION_OUTCOME.expired);
    case 'forged':
      // Nothing runs and nothing is kept; the genuine work keeps its own message.
      return sendDeadLetter(ctx, FORGED_REASON, EXECUTION_OUTCOME.forged);
  }
}
