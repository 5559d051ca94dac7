import type { ActionResult } from '../../actions/action.ts';
import { deliveryId } from '../../domain/event-record.ts';
import { RATE_START_TOLERANCE_MS } from '../../ports/rate-gate.ts';
import type { Executor } from '../executor-deps.ts';
import type { Gate, MessageContext, Slot } from '../message-context.ts';
import { actionBodyOf } from '../work-message.ts';

/** The writes before the action (the lease, the replay memory) ended past its deadline: the action is not run. */
class LeaseTooSlowError extends Error {
  constructor(deadlineMs: number, what: string) {
    super(`${what} took longer than the action's ${Math.max(0, deadlineMs)} ms deadline; not run`);
    this.name = 'LeaseTooSlowError';
  }
}

/** The writes before the action ended past the run's start slot and its tolerance: the slot is given up, nothing runs. */
export class SlotMissedError extends Error {
  constructor(lateMs: number) {
    super(`ready ${lateMs} ms after its rate-limit slot (at most ${RATE_START_TOLERANCE_MS} ms late); not run`);
    this.name = 'SlotMissedError';
  }
}

/**
 * Runs the action with the idempotency key, never past its deadline, and notes what it gave or
 * threw for settle; the replay memory is written first, before any effect, and a rate-limited run
 * starts at its slot (docs/architecture.md#the-executor-gate-by-gate).
 */
export function run(replayMemory: boolean): Gate {
  return async (ctx) => {
    try {
      ctx.ran = { result: await runAction(ctx, replayMemory) };
    } catch (error) {
      ctx.ran = { error };
    }
    return undefined;
  };
}

async function runAction(ctx: MessageContext, replayMemory: boolean): Promise<ActionResult> {
  const { executor, work, lease, body } = ctx;
  const { record, deadline, startedAt } = lease;
  if (deadline - lease.afterLease < 1) throw new LeaseTooSlowError(deadline - startedAt, 'the lease write');
  if (replayMemory) await executor.store.rememberTaken(work.route, record.fingerprint, record.receivedAt);
  if (ctx.slot !== undefined) await startAtSlot(ctx.slot, executor);
  // A write's answer can be late (the SDK sets no timeout): checked again right before the call.
  const leftMs = deadline - executor.now();
  if (leftMs < 1) throw new LeaseTooSlowError(deadline - startedAt, replayMemory ? 'the lease and replay-memory writes' : 'the lease write');
  return ctx.action({
    route: work.route,
    key: work.key,
    idempotencyKey: deliveryId(work.route, work.key),
    body: actionBodyOf(body.payload),
    rawBody: body.bytes,
    headers: body.payload.headers,
    attempt: lease.attempt,
    deadline,
    signal: AbortSignal.timeout(leftMs),
  });
}

/** Returns at the slot; a run ready more than RATE_START_TOLERANCE_MS past it gives the slot up. Teaches the instance's lead. */
async function startAtSlot(slot: Slot, executor: Executor): Promise<void> {
  slot.lead.observe(executor.now() - slot.askedAtMs);
  for (let now = executor.now(); now < slot.startAtMs; now = executor.now()) await executor.sleep(slot.startAtMs - now);
  const lateMs = executor.now() - slot.startAtMs;
  if (lateMs > RATE_START_TOLERANCE_MS) throw new SlotMissedError(lateMs);
}
