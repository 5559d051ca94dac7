/**
 * The executor's lease and what follows it under the lease token: complete, release, the rate
 * limit's deferrals, and a person's skip of a line's head (docs/state-machine.md).
 */
import { MESSAGE_COVER_SECONDS } from '../config/route-config.ts';
import type { Payload } from '../domain/event-record.ts';
import { withNonce, S, PARKED_INDEX, STATUS, keep, seconds, LIVE, RUNNABLE, GENUINE, waitingToRun, runnable, fenced } from './record-conditions.ts';
import type { Transition } from './record-conditions.ts';

export interface LeaseParams {
  readonly receivedAt: number;
  readonly nowMs: number;
  /** This record's lease (route-lease.ts): kept on the record as `leaseSeconds`, which no later write removes. */
  readonly leaseMs: number;
  /** Fresh for every lease; every later write of the attempt is fenced by it. */
  readonly token: string;
  readonly maxAttempts: number;
  /** SHA-256 of the message's body: the lease is taken only for the body the record was accepted with. @default - not checked */
  readonly fingerprint?: string;
  /** Kept on the record when this is not the message's first receive: its first run's worker may have died. */
  readonly payload?: Payload;
  /** How long past its end another worker's lease still holds, by our clock. @default TAKEOVER_MARGIN_MS */
  readonly takeoverMs?: number;
  /** The line's place whose turn this run is: refused when a person's skip fenced it (fenceSkip). @default - not ordered */
  readonly linePlace?: number;
  /** The message is the one a new delivery's answer followed (WorkMessage.startsCount). @default false */
  readonly startsCount?: boolean;
}

/**
 * RECEIVED | PARKED | EXECUTING (lease over) -> EXECUTING: the DynamoDB form of SKIP LOCKED.
 * It spends one attempt of the budget (and counts one more run in all, across redrives), and
 * drops the parked index keys of a PARKED record. A message whose body's SHA-256 is not the
 * record's fingerprint takes no lease: whoever can send to the queue cannot run a forged body.
 * The lease's length goes on the record (`leaseSeconds`) in the same write, and stays there
 * after the lease ends, so a reader (inspect, a person) knows what the record was given: on a
 * route with a time per destination, each record's own (route-lease.ts).
 * The lease of the message a new delivery's answer followed starts the breaker's count, unless one
 * runs or a 5xx of ours froze it: repeatBase = hits (no frozen count on a record that never
 * answered a 5xx), counted from the claim's own time (architecture.md#circuit-breaker).
 */
export function acquireLease(p: LeaseParams): Transition {
  const kept = keep(p.payload);
  const count = p.startsCount === true ? ', repeatBase = if_not_exists(repeatBase, hits), answeredAt = if_not_exists(answeredAt, receivedAt)' : '';
  return withNonce({
    ConditionExpression: `${LIVE} AND attempts < :maxAttempts AND ${p.fingerprint === undefined ? '' : `${GENUINE} AND `}${RUNNABLE}${p.linePlace === undefined ? '' : ` AND ${NOT_SKIPPED}`}`,
    UpdateExpression:
      `SET #status = :executing, leaseUntil = :leaseUntil, leaseSeconds = :leaseSeconds, leaseToken = :token, claimedAt = :now${kept.set}${count} ` +
      'REMOVE #gsi2pk, #gsi2sk, waitingTurn, lineEntity ADD attempts :one, runs :one',
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey, ...kept.names },
    ExpressionAttributeValues: {
      ...runnable(p),
      ...kept.values,
      ':leaseUntil': p.nowMs + p.leaseMs,
      ':leaseSeconds': p.leaseMs / 1000,
      ':token': p.token,
      ':one': 1,
      ...(p.linePlace === undefined ? {} : { ':linePlace': p.linePlace }),
    },
  });
}

/** The run's place in its line was not skipped by a person (fenceSkip). */
const NOT_SKIPPED = '(attribute_not_exists(lineSkipped) OR lineSkipped <> :linePlace)';

/**
 * A person's `order skip` of a FAILED head, before its line's cursor moves past `place`: FAILED
 * stays FAILED, `lineSkipped` names the place. A redrive that lands between the skip's read and
 * its move either came first (this write is refused, and so is the skip) or runs no lease at
 * that place (acquireLease's NOT_SKIPPED): the head never runs beside the waiter the skip wakes.
 */
export function fenceSkip(p: { receivedAt: number; place: number }): Transition {
  return withNonce({
    ConditionExpression: '#status = :failed AND receivedAt = :receivedAt',
    UpdateExpression: 'SET lineSkipped = :place',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: { ':failed': S.failed, ':receivedAt': p.receivedAt, ':place': p.place },
  });
}

/**
 * A rate-limited route's run was refused by its gate (rate-gate.ts): the work waits for a
 * delayed wake-up message that comes back at `untilMs`. The state stays as it is (RECEIVED,
 * PARKED or EXECUTING with its lease over: whatever acquireLease would take), no attempt is
 * spent, and `lastEnqueuedAt` moves to `untilMs`, so neither a duplicate's resend nor the
 * reconciler's (claimResend: lastEnqueuedAt before their window) takes waiting work for lost
 * until it is overdue by then. The budget is not in the condition: a record whose budget is
 * spent waits its turn too, and its lease write then fails it (failExhausted).
 */
export function deferForRate(p: { receivedAt: number; nowMs: number; untilMs: number; fingerprint: string; takeoverMs?: number }): Transition {
  return withNonce({
    ConditionExpression: `${LIVE} AND ${GENUINE} AND ${RUNNABLE}`,
    UpdateExpression: 'SET lastEnqueuedAt = :until ADD deferrals :one',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: { ...waitingToRun(p), ':until': p.untilMs, ':one': 1 },
    // The delayed message may wait 14 days in the queue once it is visible.
    extendExpiry: { receivedAt: p.receivedAt, keepUntilSeconds: seconds(p.untilMs) + MESSAGE_COVER_SECONDS },
  });
}

/**
 * EXECUTING (this token) -> COMPLETED. The attempt that completes is logged on the record
 * itself, not in a log item of its own: its run number (`runs`), start (`claimedAt`, set by
 * the lease), end (`completedAt`), operation fingerprint and request id. Log items are kept
 * for the attempts that did not complete, and for repairs (see store/execution-history.ts).
 */
export function complete(p: { token: string; nowMs: number; result: string; operationFingerprint: string; requestId?: string }): Transition {
  const requestId = p.requestId === undefined ? '' : ', requestId = :requestId';
  return fenced(
    p.token,
    p.nowMs,
    `SET #status = :completed, completedAt = :now, #result = :result, operationFingerprint = :operation${requestId} REMOVE leaseUntil`,
    {
      ':completed': S.completed,
      ':result': p.result,
      ':operation': p.operationFingerprint,
      ...(p.requestId === undefined ? {} : { ':requestId': p.requestId }),
    },
    { '#result': 'result' },
  );
}

/**
 * EXECUTING (this token) -> RECEIVED after a retryable error, budget left. The message in
 * hand goes back to SQS and stays the record's wake-up call, so the hand-back counts as a
 * send: a duplicate delivery during the visibility wait must not think the message lost.
 */
export function release(p: { token: string; nowMs: number; error: string }): Transition {
  return fenced(
    p.token,
    p.nowMs,
    'SET #status = :received, lastError = :error, lastErrorAt = :now, lastEnqueuedAt = :now REMOVE leaseUntil, leaseToken',
    { ':received': S.received, ':error': p.error },
  );
}

/**
 * EXECUTING (this token) -> RECEIVED, nothing run: a rate-limited run was ready only after its
 * start slot (RATE_START_TOLERANCE_MS past it: the lease write was slow) and gives the slot up
 * rather than start over the limit. It hands back the attempt its lease spent, since nothing
 * ran; `runs` keeps counting leases (it only grows: the latest lease is the one with the most),
 * so the next run's number skips this one. It waits for a delayed wake-up message at `untilMs`,
 * as work deferForRate refused waits: `lastEnqueuedAt` moves there, so no resend takes it for
 * lost.
 */
export function deferLeased(p: { token: string; untilMs: number; receivedAt: number }): Transition {
  return withNonce({
    // fenced()'s condition: this token still holds the record.
    ConditionExpression: 'leaseToken = :token AND #status = :executing',
    UpdateExpression: 'SET #status = :received, lastEnqueuedAt = :until REMOVE leaseUntil, leaseToken ADD attempts :back, deferrals :one',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: { ':token': p.token, ':executing': S.executing, ':received': S.received, ':until': p.untilMs, ':back': -1, ':one': 1 },
    // The delayed message may wait 14 days in the queue once it is visible.
    extendExpiry: { receivedAt: p.receivedAt, keepUntilSeconds: seconds(p.untilMs) + MESSAGE_COVER_SECONDS },
  });
}
