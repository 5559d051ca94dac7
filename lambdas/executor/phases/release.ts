import { describeError, lastErrorOf } from '../attempt-error.ts';
import { EXECUTION_OUTCOME } from '../execution-report.ts';
import type { ExecutionReport } from '../execution-report.ts';
import type { MessageContext } from '../message-context.ts';
import { fencedOut } from '../reports.ts';
import { wakeUpOf } from '../work-message.ts';

/** A rate-limited run ready too late for its slot comes back this soon to ask the gate again. */
const SLOT_MISSED_RETRY_SECONDS = 1;

/**
 * Back to RECEIVED with budget left: this message stays the record's wake-up call. Fenced out, it
 * may be the only message left for the work, so it goes back all the same, never deleted
 * (docs/architecture.md#every-write-can-be-ambiguous).
 */
export async function release(ctx: MessageContext, error: unknown): Promise<ExecutionReport> {
  const { executor, lease } = ctx;
  const described = describeError(error);
  const errorText = lastErrorOf(described);
  const endedAt = executor.now();
  const owned = await executor.store.release({ ...lease.fence, nowMs: endedAt, error: errorText });
  const outcome = owned ? EXECUTION_OUTCOME.retry : EXECUTION_OUTCOME.fencedOut;
  await executor.store.appendLog({ ...lease.log, endedAt, outcome, error: described });
  return owned ? { ...ctx.about, attempt: lease.attempt, outcome, ack: false, error: errorText } : fencedOut(ctx, lease.attempt, errorText);
}

/**
 * Nothing ran: the lease's attempt goes back, and a wake-up comes back in a moment to ask the
 * gate again (docs/architecture.md#rate-limits-and-isolation). A failed write or send throws.
 */
export async function giveSlotBack(ctx: MessageContext): Promise<ExecutionReport> {
  const { executor, lease, body } = ctx;
  const nowMs = executor.now();
  const untilMs = nowMs + SLOT_MISSED_RETRY_SECONDS * 1000;
  const owned = await executor.store.deferLeased({ ...lease.fence, receivedAt: lease.record.receivedAt, nowMs, untilMs });
  if (!owned) return fencedOut(ctx, lease.attempt);
  await executor.workQueue.send(wakeUpOf(ctx.work), { delaySeconds: SLOT_MISSED_RETRY_SECONDS, ...body.sendHint });
  return { ...ctx.about, attempt: lease.attempt, outcome: EXECUTION_OUTCOME.rateLimited, ack: true };
}
