/**
 * Phase 2 of a run: records an earlier run could not re-send (SQS down, or refusing them), from
 * the retry partition, whatever their age: one that left the 24 h window unrepaired is never lost
 * from view. why: docs/architecture.md#reconciliation
 */
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { EventRecord } from '../domain/event-record.ts';
import type { ReconcilePosition } from '../ports/reconciler-store.ts';
import { sweepIndex } from './index-sweep.ts';
import type { ReconcileRun } from './reconcile-run.ts';
import { messageFor, resendRequestOf, trySend } from './resend.ts';

/** Sweeps every route's retry partition; undefined once done, or where it stopped. */
export function strandedPhase(run: ReconcileRun): Promise<ReconcilePosition | undefined> {
  return sweepIndex(
    run,
    'stranded',
    (route, after) => run.deps.store.listStranded(route, after),
    (route, record) => strandedRecord(run, route, record),
  );
}

async function strandedRecord(run: ReconcileRun, _route: ResolvedRoute, full: EventRecord): Promise<void> {
  const { deps, counts } = run;
  const settled =
    full.status === RECORD_STATUS.completed ||
    full.status === RECORD_STATUS.parked ||
    (full.status === RECORD_STATUS.failed && full.deadLettered !== undefined);
  if (settled) {
    await deps.store.clearStranded(full);
    return;
  }
  if (counts.reenqueued >= run.options.maxReenqueue) {
    run.flag(full, 'reenqueue-limit', 'left for the next run: the per-run re-enqueue bound was reached');
    return;
  }
  // fail keeps the payload; a record kept here for want of one is re-sent once a copy kept it.
  const message = messageFor(run, full);
  if (message === undefined) {
    // No copy answered 2xx, or its message waits in the DLQ: watched while its sender may retry, then left to them.
    const windowMs = (deps.routes.get(full.route)?.senderRetryWindowSeconds ?? 0) * 1000;
    if (run.now - full.receivedAt > windowMs + run.options.stuckAfterMs) await deps.store.clearStranded(full);
    return;
  }
  const request = resendRequestOf(run, full);
  if (!(await deps.store.claimResend(full.route, full.key, request))) return;
  if (await trySend(run, full, message, full.status === RECORD_STATUS.failed ? request.nowMs : undefined)) {
    await deps.store.clearStranded(full);
    counts.reenqueued++;
    await run.correction(full, 're-enqueued', { was: full.status, from: 'retry partition' });
  }
}
