import type { ResolvedRateLimit } from '../../config/resolve-config.ts';
import { SQS_MAX_DELAY_SECONDS } from '../../config/route-config.ts';
import type { LeaseTimes } from '../../config/route-lease.ts';
import { RATE_WAIT_MAX_MS } from '../../ports/rate-gate.ts';
import type { RateGate, SlotWindow } from '../../ports/rate-gate.ts';
import { EXECUTION_OUTCOME } from '../execution-report.ts';
import type { Gate } from '../message-context.ts';
import { leaseTimesOf } from '../message-context.ts';
import { blockedBy } from '../reports.ts';
import type { StartLead } from '../start-lead.ts';
import { wakeUpOf } from '../work-message.ts';

/**
 * A run of a rate-limited route gets a start slot, or waits in the queue as a delayed wake-up,
 * never on a hand-back that counts toward maxReceiveCount
 * (docs/architecture.md#rate-limits-and-isolation). Routes without a limit never enter it.
 */
export function rateGate(gate: RateGate, limit: ResolvedRateLimit, lead: StartLead): Gate {
  return async (ctx) => {
    const { executor, work, body } = ctx;
    const askedAtMs = executor.now();
    const decision = await gate.admit(work.route, limit, askedAtMs, slotWindow(leaseTimesOf(ctx), lead.ms()));
    if (decision.admitted) {
      ctx.slot = { startAtMs: decision.startAtMs, askedAtMs, lead };
      return undefined;
    }
    const nowMs = executor.now();
    const delaySeconds = Math.min(SQS_MAX_DELAY_SECONDS, Math.max(1, Math.ceil((decision.retryAtMs - nowMs) / 1000)));
    const deferred = await executor.store.deferForRate({ ...ctx.ref, nowMs, untilMs: nowMs + delaySeconds * 1000, fingerprint: body.fingerprint });
    if (deferred.kind !== 'deferred') return blockedBy(ctx, deferred);
    // Only a sent wake-up lets this message go: a failed send throws, and the message comes back.
    await executor.workQueue.send(wakeUpOf(work), { delaySeconds, ...body.sendHint });
    return { ...ctx.about, outcome: EXECUTION_OUTCOME.rateLimited, ack: true };
  };
}

/**
 * Where a run's slot may fall: its lead ahead, and no further than it can wait without cutting
 * its action's time (what the deadline leaves past the declared action time); at least the lead,
 * at most RATE_WAIT_MAX_MS.
 */
function slotWindow(times: LeaseTimes, leadMs: number): SlotWindow {
  const roomMs = (times.actionDeadlineSeconds - times.actionTimeSeconds) * 1000;
  return { leadMs, maxWaitMs: Math.min(RATE_WAIT_MAX_MS, Math.max(leadMs, roomMs)) };
}
