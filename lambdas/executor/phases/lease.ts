import type { LeaseTimes } from '../../config/route-lease.ts';
import type { EventRecord } from '../../domain/event-record.ts';
import { operationFingerprint } from '../../domain/operation-fingerprint.ts';
import type { Gate, HeldLease, MessageContext } from '../message-context.ts';
import { leaseTimesOf } from '../message-context.ts';
import { blockedBy } from '../reports.ts';
import { failSpentBudget } from './fail.ts';

/** The action's deadline ends this long before the invocation's, for the completion write. */
const COMPLETION_MARGIN_MS = 2_000;

/**
 * The lease, DynamoDB's `SKIP LOCKED`: every later write is fenced by its token, and the action's
 * deadline counts from the instant before its write was sent
 * (docs/architecture.md#every-write-can-be-ambiguous).
 */
export const lease: Gate = async (ctx) => {
  const { executor, route, body, message, line } = ctx;
  const times = leaseTimesOf(ctx);
  const startedAt = executor.now();
  const token = executor.newId();
  const outcome = await executor.store.acquireLease({
    ...ctx.ref,
    nowMs: startedAt,
    leaseMs: times.leaseSeconds * 1000,
    token,
    maxAttempts: route.maxAttempts,
    fingerprint: body.fingerprint,
    // Not the first receive: an earlier worker may have died (docs/architecture.md#the-executor-gate-by-gate).
    ...(message.receiveCount > 1 ? { payload: body.kept } : {}),
    ...(line === undefined ? {} : { linePlace: line.place }),
    ...(ctx.work.startsCount === true ? { startsCount: true } : {}),
  });
  if (outcome.kind === 'exhausted') return failSpentBudget(ctx, outcome.record);
  if (outcome.kind !== 'leased') return blockedBy(ctx, outcome);
  ctx.lease = heldLease(ctx, outcome.record, times, token, startedAt);
  return undefined;
};

/** The lease as the run and the settling writes use it: the deadline never passes the invocation's end. */
function heldLease(ctx: MessageContext, record: EventRecord, times: LeaseTimes, token: string, startedAt: number): HeldLease {
  const { executor, work, route, invocation } = ctx;
  const attempt = record.runs;
  const afterLease = executor.now();
  const invocationEndsAt = afterLease + invocation.remainingMs();
  const deadline = Math.min(startedAt + times.actionDeadlineSeconds * 1000, invocationEndsAt - COMPLETION_MARGIN_MS);
  const log = {
    route: work.route,
    key: work.key,
    receivedAt: record.receivedAt,
    kind: 'execution' as const,
    attempt,
    startedAt,
    operationFingerprint: operationFingerprint(work.route, work.key, route.action, record.fingerprint),
    expiresAt: record.expiresAt,
    ...(record.redrives > 0 ? { detail: { redrive: record.redrives } } : {}),
    ...(invocation.requestId === undefined ? {} : { requestId: invocation.requestId }),
  };
  return { record, attempt, times, startedAt, afterLease, deadline, log, fence: { route: work.route, key: work.key, token } };
}
