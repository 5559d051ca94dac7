/**
 * Every record ends the run where its state says it should: COMPLETED with one entry and its
 * charge standing, FAILED with its dead-letter copy in the DLQ (or retired by retention), PARKED
 * only on a paused route or behind a FAILED head of its line, and none stranded.
 */
import { CLOCK_SKEW_SECONDS } from '../../../lambdas/config/route-config.ts';
import type { ResolvedRoute } from '../../../lambdas/config/resolve-config.ts';
import { RECORD_STATUS } from '../../../lambdas/domain/event-record.ts';
import type { EventRecord } from '../../../lambdas/domain/event-record.ts';
import type { EntityOrder } from '../../../lambdas/ports/entity-order.ts';
import type { KeyState } from '../key-state.ts';
import type { World } from '../world.ts';
import type { KeyFacts } from './key-facts.ts';

/** What the end of a run reads once for every key: the paused routes, the DLQs' copies, the lines. */
export interface EndState {
  readonly paused: ReadonlySet<string>;
  readonly dlqBodies: readonly { readonly messageId: string; readonly neverHanded: boolean; readonly body: Record<string, unknown> }[];
  readonly order: EntityOrder;
}

/**
 * A record left RECEIVED or EXECUTING once the run has settled: accepted work nothing will run.
 * Not so a record never accepted: no delivery of it got an answer below 500 (each function died
 * after its claim and before its send), and its sender gave up at the end of its retry window.
 * It sent nothing and kept nothing, so nothing of it can run; no promise was made, and the
 * reconciler reports it (payload-not-kept). A re-post is the only way it runs.
 */
export function strandedAtEnd(k: KeyState, record: EventRecord, routes: ReadonlyMap<string, ResolvedRoute>, nowMs: number): boolean {
  if (record.status === RECORD_STATUS.completed || record.status === RECORD_STATUS.failed || record.status === RECORD_STATUS.parked) return false;
  const window = (routes.get(k.route)?.senderRetryWindowSeconds ?? 0) * 1000;
  const senderGaveUp = k.firstSentAt !== undefined && nowMs - k.firstSentAt > window;
  // A generation claimed by a replay after every 2xx of the key (its receipt, on a clock within
  // the bound, later than the last answer) got none: all its copies died (seed 907).
  const answered = k.lastAnsweredAt !== undefined && k.lastAnsweredAt >= record.receivedAt - CLOCK_SKEW_SECONDS * 1000;
  const neverAccepted = !answered && senderGaveUp && record.status === RECORD_STATUS.received && record.runs === 0 && record.body === undefined;
  return !neverAccepted;
}

export async function checkRecordEndsSettled(w: World, { k, posted, standing, charges }: KeyFacts, record: EventRecord, end: EndState): Promise<void> {
  const { violations } = w;
  switch (record.status) {
    case RECORD_STATUS.completed: {
      if (posted !== 1) violations.push(`${k.key}: COMPLETED with ${posted} posted ledger entries`);
      if (standing === 0) {
        const undone = w.simLedger.reversals.some((r) => r.refunded !== undefined && charges.some((c) => c.chargeId === r.refunded));
        violations.push(`${k.key}: COMPLETED with no charge standing${undone ? ': a reversal refunded its only genuine effect' : ''}`);
      }
      break;
    }
    case RECORD_STATUS.failed: {
      const copy = end.dlqBodies.some((m) => m.body.key === k.key && m.body.route === k.route && m.body.deadLetterId === record.deadLetterId);
      // A copy that waited out the DLQ's retention (14 days from its enqueue time) is gone as AWS documents.
      const retired = (w.dlqExpiries.get(record.deadLetterId ?? '') ?? Number.POSITIVE_INFINITY) <= w.nowMs;
      if (!copy && !retired) violations.push(`${k.key}: FAILED, but its dead-letter copy ${String(record.deadLetterId)} is not in the DLQ`);
      break;
    }
    case RECORD_STATUS.parked:
      if (end.paused.has(k.route)) break;
      if (record.waitingTurn !== undefined && record.lineEntity !== undefined) {
        // Waiting in its entity's line: only behind a head that a person must redrive or skip.
        const line = await end.order.view(k.route, record.lineEntity, w.nowMs, 1000);
        const head = line.places.find((p) => p.status !== undefined && p.status !== RECORD_STATUS.completed);
        if (head?.status !== RECORD_STATUS.failed) {
          violations.push(`${k.key}: PARKED waiting for its turn (place ${record.waitingTurn}), and the head of its line is ${head === undefined ? 'nothing' : `${head.key}, ${String(head.status)}`}, not FAILED: a wake-up was lost`);
        }
        break;
      }
      violations.push(`${k.key}: PARKED on route ${k.route}, which is active`);
      break;
    default: {
      if (strandedAtEnd(k, record, w.routes, w.nowMs)) violations.push(`${k.key}: stranded in ${record.status} (attempts ${record.attempts}, last sent ${String(record.lastEnqueuedAt)})`);
    }
  }
}
