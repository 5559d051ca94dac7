/**
 * Every state transition of an event record, each one conditional write, side by side
 * (protocol v3; docs/state-machine.md). The stores only send these; no
 * other code moves a record. Each condition is the whole rule for its transition:
 *
 *   claimKey        absent -> RECEIVED; live -> the same record, its hit counted (ingest;
 *                   one UpdateItem for new and duplicate deliveries alike; its claimId tells
 *                   the SDK's retry of our own creation from a duplicate)
 *   claimExpiredKey expired -> RECEIVED, a new generation (ingest; the rare second request;
 *                   a refusal that shows our claimId is our own put, retried)
 *   forgetReplay    RECEIVED, never sent or kept, that the replay memory shows to be a
 *                   capture replayed after its record expired      -> absent      (ingest; nothing of it ever ran)
 *   acquireLease    RECEIVED | PARKED | EXECUTING with its lease over (leaseUntil <= now - 2 x
 *                   the clock bound), attempts < maxAttempts, the message's body the
 *                   record's fingerprint                               -> EXECUTING   (executor; writes
 *                                                                                     the lease it gives,
 *                                                                                     leaseSeconds, beside
 *                                                                                     leaseUntil)
 *   complete        EXECUTING under this lease token                   -> COMPLETED   (executor)
 *   release         EXECUTING under this lease token                   -> RECEIVED    (executor, retryable error)
 *   fail            EXECUTING under this lease token                   -> FAILED      (executor, permanent or last attempt;
 *                                                                                     in the retry partition until its copy leaves;
 *                                                                                     expiry at least MESSAGE_COVER_SECONDS on)
 *   failExhausted   as acquireLease, but attempts >= maxAttempts       -> FAILED      (executor: the last attempt's worker died;
 *                                                                                     expiry as fail's)
 *   park            RECEIVED | EXECUTING with its lease over, the
 *                   body genuine                                       -> PARKED      (executor, route paused)
 *   unpark          PARKED                                             -> RECEIVED    (route resume, reconciler; expiry at
 *                                                                                     least MESSAGE_COVER_SECONDS on)
 *   deferForRate    as acquireLease, whatever its budget (its route's rate
 *                   limit refused the run)                              -> the same state (executor; lastEnqueuedAt
 *                                                                                     = when the delayed wake-up comes
 *                                                                                     back, deferrals + 1; no attempt
 *                                                                                     spent; expiry at least
 *                                                                                     MESSAGE_COVER_SECONDS on)
 *   deferLeased     EXECUTING under this lease token, the run ready
 *                   only after its rate-limit start slot                -> RECEIVED    (executor; nothing ran: the
 *                                                                                     lease's attempt is handed back,
 *                                                                                     deferrals + 1, lastEnqueuedAt
 *                                                                                     = when the delayed wake-up comes
 *                                                                                     back; expiry as deferForRate's)
 *   fenceSkip       FAILED, this generation                            -> FAILED, lineSkipped = the place (a person's
 *                                                                                     order skip, before the line moves;
 *                                                                                     acquireLease refuses a run at it)
 *   redrive         FAILED, this copy's id, and the copy stamped by SQS
 *                   after every copy of ours was (a person made it)    -> RECEIVED    (executor, a person's redrive;
 *                                                                                     expiry at least MESSAGE_COVER_SECONDS on;
 *                                                                                     the same write for `retryproof redrive`,
 *                                                                                     stamped by the tool, which enters the
 *                                                                                     retry partition until its send lands)
 *
 * fail and failExhausted also put the record in the sparse `failed` index (gsi3, sharded), which
 * only redrive takes it out of: a person's bulk redrive finds FAILED work by route and time there.
 *
 * And the writes that keep a state but guard a side effect:
 *   claimResend     a RECEIVED record whose message is lost, an EXECUTING one whose lease
 *                   ended long ago, a FAILED one whose dead-letter copy never left: at
 *                   most one resend per window (ingest, reconciler; expiry at least
 *                   MESSAGE_COVER_SECONDS on)
 *   markDeadLettered  the dead-letter copy's last receive before SQS moves it to the DLQ (the
 *                   reconciler's hint that it left; a redrive does not depend on it)
 *   keepParked      a PARKED record's expiry moves on while its route stays paused
 *   markStranded    a record the reconciler could not re-send enters the sparse retry
 *                   partition, so it is found again after it leaves the 24 h window
 *   clearStranded   and leaves it once a re-send went out (acquireLease also drops it)
 *   recordEnqueueFailure  a send failed: the record answers 5xx until a resend is won
 *   keepPayload     a duplicate found the work not yet taken by any worker: its first message
 *                   may never have gone out, so the record keeps the payload before we answer
 *   markAnswered    a resend's answer below 500 is about to be given, and no count runs (a 5xx
 *                   of ours froze it): the breaker counts repeats from here (ingest)
 *   excuseRacingCopy  a copy claimed after the mark that may have arrived before the answer:
 *                   no repeat, repeatBase moves on by its hit (ingest)
 *
 * The payload (body and kept headers) travels in the work message; the claim does not
 * write it. The record keeps it where work may have to be sent again from the table alone:
 * recordEnqueueFailure, keepPayload, park, fail, failExhausted, and a lease taken on a
 * message's second receive or later (its first run's worker may have died). Once kept, it
 * is not written again (if_not_exists).
 *
 * The circuit breaker's `repeats` counts the deliveries that arrived after we had answered below
 * 500 (protocol v4; docs/architecture.md#circuit-breaker). It is derived, never counted by a
 * write of its own: repeats = hits - repeatBase while repeatBase >= 0 (the count runs), and the
 * frozen `repeats` (0 when absent) otherwise. A fresh record has no repeatBase (claimKey never
 * writes it); a worker's lease of the message its new delivery's ingest sent sets it to hits,
 * and a resend's markAnswered to hits - repeats. recordEnqueueFailure freezes a running count into `repeats` and sets repeatBase to
 * COUNT_FROZEN when the answer becomes a 5xx, and only a resend's mark starts it again. claimKey's one write both counts the hit and returns the
 * record as it stood, so a duplicate knows at once whether it is a repeat and which one.
 *
 * "This generation" is `receivedAt = :receivedAt`: a key reused after its record expired
 * is a new record, and a message minted for the old one must never touch it.
 *
 * Every transition writes a nonce, `writeId` (conditional-write.ts): the SDK's retry of a
 * write that committed but lost its answer meets its own write, and counts it as done.
 * A record outlives every message that may still point to it: each transition that sends one,
 * or starts a wait on a person, moves `expiresAt` at least MESSAGE_COVER_SECONDS (the queues'
 * 14-day retention and a day) ahead, never back.
 */
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { CLOCK_SKEW_SECONDS, DEAD_LETTER_SEND_SECONDS, MESSAGE_COVER_SECONDS, takeoverMarginMs } from '../config/route-config.ts';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { Payload, StoredAnswer } from '../domain/event-record.ts';
import { WRITE_ID, WRITE_ID_VALUE, newWriteId } from './conditional-write.ts';
import type { ExpiryFollowUp } from './conditional-write.ts';
import { timeShard } from './record-keys.ts';
import { EVENTS_TABLE } from './table-schema.ts';

/**
 * The condition and update of one transition, without its table and key; `extendExpiry` is a
 * second write that conditionalUpdate makes once the transition is done (conditional-write.ts).
 */
export type Transition = Required<
  Pick<UpdateCommandInput, 'ConditionExpression' | 'UpdateExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>
> & { readonly extendExpiry?: ExpiryFollowUp };

/**
 * The write nonce (conditional-write.ts): `SET writeId = :writeId`, fresh for each call, so that
 * a refusal met by the SDK's retry of our own committed write is recognised as ours.
 */
function withNonce(t: Transition): Transition {
  const set = `SET ${WRITE_ID} = ${WRITE_ID_VALUE}`;
  const update = t.UpdateExpression.startsWith('SET ') ? `${set}, ${t.UpdateExpression.slice(4)}` : `${set} ${t.UpdateExpression}`;
  return { ...t, UpdateExpression: update, ExpressionAttributeValues: { ...t.ExpressionAttributeValues, [WRITE_ID_VALUE]: newWriteId() } };
}

/**
 * Twice the default clock bound, in ms: a lease written by another machine is over only this
 * long after its end by our clock. A deployment's own bound (maxClockSkewSeconds) reaches the
 * transitions as `takeoverMs` (the stores pass it); this is what they use without one.
 */
export const TAKEOVER_MARGIN_MS = takeoverMarginMs(CLOCK_SKEW_SECONDS);

/** The clock margins of a deployment, from its bound: what the stores hand the transitions. */
export interface ClockMargins {
  /** TAKEOVER_MARGIN_MS for the deployment's bound. */
  readonly takeoverMs: number;
  /** DEAD_LETTER_STAMP_MARGIN_MS for the deployment's bound. */
  readonly deadLetterStampMs: number;
}

/** The margins for a clock bound in seconds (maxClockSkewSeconds). */
export function clockMargins(clockSkewSeconds: number): ClockMargins {
  return { takeoverMs: takeoverMarginMs(clockSkewSeconds), deadLetterStampMs: DEAD_LETTER_SEND_SECONDS * 1000 + takeoverMarginMs(clockSkewSeconds) };
}

/**
 * A dead-letter copy stamped by SQS (SentTimestamp) this long after the record's last send of
 * one cannot be ours: our sends land within DEAD_LETTER_SEND_SECONDS of the write that won
 * them, and the writer's clock and SQS's may differ by the clock bound each.
 */
export const DEAD_LETTER_STAMP_MARGIN_MS = clockMargins(CLOCK_SKEW_SECONDS).deadLetterStampMs;

/** The expiry a record needs once a message or a copy for it goes out now, never earlier than it has. */
export function keepUntilSeconds(expiresAt: number, nowMs: number): number {
  return Math.max(expiresAt, Math.floor(nowMs / 1000) + MESSAGE_COVER_SECONDS);
}

const S = RECORD_STATUS;
const PARKED_INDEX = EVENTS_TABLE.parkedIndex;
const STATUS = { '#status': 'status' } as const;

const PAYLOAD_NAMES = { '#body': 'body', '#bodyEncoding': 'bodyEncoding', '#headers': 'headers' } as const;

/** The SET clauses (each led by a comma) that keep a payload on the record, once: a kept one is never written again. */
function keep(payload: Payload | undefined): { set: string; names: Record<string, string>; values: Record<string, unknown> } {
  if (payload === undefined) return { set: '', names: {}, values: {} };
  const kept = {
    set: ', #body = if_not_exists(#body, :body), #bodyEncoding = if_not_exists(#bodyEncoding, :bodyEncoding), #headers = if_not_exists(#headers, :headers)',
    names: PAYLOAD_NAMES,
    values: { ':body': payload.body, ':bodyEncoding': payload.bodyEncoding, ':headers': payload.headers },
  };
  if (payload.bodyObject === undefined) return kept;
  // A large body's pointer (the S3 claim check), kept with the rest of its payload.
  return {
    set: `${kept.set}, #bodyObject = if_not_exists(#bodyObject, :bodyObject)`,
    names: { ...kept.names, '#bodyObject': 'bodyObject' },
    values: { ...kept.values, ':bodyObject': payload.bodyObject },
  };
}

/** Epoch seconds of an instant, as `expiresAt` holds them. */
function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** This generation of the key, and not expired: every transition but claimKey starts here. */
const LIVE = 'receivedAt = :receivedAt AND expiresAt > :nowSeconds';
/**
 * Waiting to run: RECEIVED, PARKED (its route was resumed), or EXECUTING by a worker whose lease
 * ran out, by our clock less twice the clock bound (`:takeover`, see TAKEOVER_MARGIN_MS).
 */
const RUNNABLE = '(#status IN (:received, :parked) OR (#status = :executing AND leaseUntil <= :takeover))';
/** The body in the message is the body the record was accepted with: a forged or altered one never runs or is kept. */
const GENUINE = 'fingerprint = :fingerprint';
/**
 * `repeatBase` once a 5xx of ours stood: no count runs, and a worker's lease starts none (it
 * writes if_not_exists); only the mark of a resend that answers below 500 starts it again.
 */
export const COUNT_FROZEN = -1;
/** The breaker's count runs (`:zero` bound to 0). */
const COUNTING = 'repeatBase >= :zero';
const NOT_COUNTING = '(attribute_not_exists(repeatBase) OR repeatBase < :zero)';

function live(receivedAt: number, nowMs: number): Record<string, unknown> {
  return { ':receivedAt': receivedAt, ':nowSeconds': seconds(nowMs) };
}

/** The values of LIVE, RUNNABLE and GENUINE (when a fingerprint is given). */
function waitingToRun(p: { receivedAt: number; nowMs: number; fingerprint?: string; takeoverMs?: number }): Record<string, unknown> {
  return {
    ...live(p.receivedAt, p.nowMs),
    ':received': S.received,
    ':parked': S.parked,
    ':executing': S.executing,
    ':takeover': p.nowMs - (p.takeoverMs ?? TAKEOVER_MARGIN_MS),
    ...(p.fingerprint === undefined ? {} : { ':fingerprint': p.fingerprint }),
  };
}

/** The values of LIVE, RUNNABLE, GENUINE and the budget, shared by acquireLease and failExhausted. */
function runnable(p: { receivedAt: number; nowMs: number; maxAttempts: number; fingerprint?: string; takeoverMs?: number }): Record<string, unknown> {
  return { ...waitingToRun(p), ':maxAttempts': p.maxAttempts, ':now': p.nowMs };
}

/**
 * claimKey, ingest's one UpdateItem for every delivery: it sets each attribute of the new
 * record only where it is absent (if_not_exists), adds 1 to `hits`, and returns the item as
 * it stood (ALL_OLD). Nothing came back: the record was created. A live record came back:
 * this delivery is a duplicate, its hit counted by the same write, and the record is left as
 * it was otherwise. A live record with another fingerprint refuses the write and comes back
 * as it was (a 422, no hit counted). An expired record refuses it too (TTL deletion lags by
 * up to two days, so the expiry is compared here rather than trusted to be gone): then
 * claimExpiredKey.
 *   t0 claim A: created | t1 claim A: old A back, hits 2 | t2 claim A': refused, old A back (422)
 *   ... | expiresAt | claim A: refused, expired -> claimExpiredKey
 *
 * The item carries `claimId`, a nonce fresh for each delivery, set like every attribute
 * (`claimId = if_not_exists(claimId, :claimId)`). A claim can commit and lose its answer (a
 * 500, a reset, a timeout), and the SDK sends the identical UpdateItem again: that retry finds
 * the record its own first attempt created, succeeds, adds one more hit and returns it. An
 * ALL_OLD whose claimId and receivedAt are ours is therefore our own creation, not a
 * duplicate: its work is sent and answered 202 (the store reports it as created). The extra
 * hit is harmless: the count starts at the lease, from the hits it finds (acquireLease).
 *   t0 attempt 1: created, answer lost | t1 attempt 2: old back, claimId ours, hits 2 -> created
 *
 * Only attributes that no later transition removes may be set here: a duplicate would put a
 * removed one back. So `repeatBase` is never set here (a lease or markAnswered sets it,
 * recordEnqueueFailure freezes it).
 */
export function claimKey(p: { item: Readonly<Record<string, unknown>>; nowMs: number }): Transition {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':nowSeconds': seconds(p.nowMs), ':one': 1 };
  const sets: string[] = [];
  let i = 0;
  for (const [name, value] of Object.entries(p.item)) {
    if (name === 'pk' || name === 'sk' || name === 'hits' || name === 'repeatBase' || value === undefined) continue;
    names[`#a${i}`] = name;
    values[`:a${i}`] = value;
    sets.push(`#a${i} = if_not_exists(#a${i}, :a${i})`);
    i++;
  }
  values[':fingerprint'] = p.item.fingerprint;
  return {
    // A live record with another body is refused too: a 422 leaves the first record untouched.
    ConditionExpression: 'attribute_not_exists(pk) OR (expiresAt > :nowSeconds AND fingerprint = :fingerprint)',
    UpdateExpression: `SET ${sets.join(', ')} ADD hits :one`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * The rare second request of a claim: the record claimKey found has expired, so this
 * delivery starts a new generation (a whole new item, PutItem, carrying this delivery's
 * claimId). It fails when another delivery started one first: then this one is a duplicate of
 * that, and claims again. It also fails when it committed, lost its answer and was sent again
 * by the SDK (the retry meets its own live item): asked with ALL_OLD, a refusal whose claimId
 * is ours is our own new generation.
 */
export function claimExpiredKey(
  nowMs: number,
  item: Readonly<Record<string, unknown>>,
): { Item: Record<string, unknown>; ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> } {
  // As claimKey: no repeatBase, the breaker's count starts at the lease (or a resend's markAnswered).
  const { repeatBase: _notYet, ...fresh } = item;
  return {
    Item: fresh,
    ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :nowSeconds',
    ExpressionAttributeValues: { ':nowSeconds': seconds(nowMs) },
  };
}

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

/** The fence of every write a worker makes after its lease: its token still holds the record. */
function fenced(token: string, nowMs: number, update: string, values: Record<string, unknown>, names: Record<string, string> = {}): Transition {
  return withNonce({
    ConditionExpression: 'leaseToken = :token AND #status = :executing',
    UpdateExpression: update,
    ExpressionAttributeNames: { ...STATUS, ...names },
    ExpressionAttributeValues: { ...values, ':token': token, ':executing': S.executing, ':now': nowMs },
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

/**
 * EXECUTING (this token) -> FAILED, naming the dead-letter copy about to be sent. The send
 * counts as an enqueue, and the record waits in the sparse retry partition until the copy's
 * last receive (markDeadLettered): a copy lost with a crashed worker or a failed send is
 * re-sent by the reconciler, however old the record. The copy waits for a person up to the
 * DLQ's 14 days from its send, so the record lives at least MESSAGE_COVER_SECONDS from now
 * (`keepUntilSeconds`, the later of that and its expiry: keepUntilSeconds()).
 */
export function fail(p: {
  route: string;
  key: string;
  receivedAt: number;
  token: string;
  nowMs: number;
  error: string;
  deadLetterId: string;
  /** Kept, so the reconciler can send the dead-letter copy again from the table. */
  payload: Payload;
  keepUntilSeconds: number;
}): Transition {
  const retry = strandedIndexKeys(p.route, p.key, p.receivedAt);
  const kept = keep(p.payload);
  return fenced(
    p.token,
    p.nowMs,
    'SET #status = :failed, lastError = :error, lastErrorAt = :now, failedAt = :now, deadLetterId = :dl, lastEnqueuedAt = :now, ' +
      `expiresAt = :keepUntil, #gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk, ${FAILED_INDEX_SET}${kept.set} REMOVE leaseUntil, leaseToken, deadLettered`,
    {
      ':failed': S.failed,
      ':error': p.error,
      ':dl': p.deadLetterId,
      ':keepUntil': p.keepUntilSeconds,
      ':gsi2pk': retry.gsi2pk,
      ':gsi2sk': retry.gsi2sk,
      ...failedIndexValues(p.route, p.key, p.receivedAt),
      ...kept.values,
    },
    { '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey, ...FAILED_INDEX_NAMES, ...kept.names },
  );
}

/**
 * Runnable but with the budget spent -> FAILED. Only reached when the worker of the last
 * attempt died without a word (a crash, a timeout, out of memory): its lease ran out.
 */
export function failExhausted(p: {
  route: string;
  key: string;
  receivedAt: number;
  nowMs: number;
  maxAttempts: number;
  error: string;
  deadLetterId: string;
  /** The message's: it is kept only when its SHA-256 is the record's fingerprint. */
  payload: Payload;
  fingerprint: string;
  /** As fail's: the later of the record's expiry and MESSAGE_COVER_SECONDS from now. */
  keepUntilSeconds: number;
  /** @default TAKEOVER_MARGIN_MS */
  takeoverMs?: number;
}): Transition {
  const retry = strandedIndexKeys(p.route, p.key, p.receivedAt);
  const kept = keep(p.payload);
  return withNonce({
    ConditionExpression: `${LIVE} AND attempts >= :maxAttempts AND ${GENUINE} AND ${RUNNABLE}`,
    UpdateExpression:
      'SET #status = :failed, lastError = :error, lastErrorAt = :now, failedAt = :now, deadLetterId = :dl, lastEnqueuedAt = :now, ' +
      `expiresAt = :keepUntil, #gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk, ${FAILED_INDEX_SET}${kept.set} REMOVE leaseUntil, leaseToken, deadLettered`,
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey, ...FAILED_INDEX_NAMES, ...kept.names },
    ExpressionAttributeValues: {
      ...runnable(p),
      ...kept.values,
      ':failed': S.failed,
      ':error': p.error,
      ':dl': p.deadLetterId,
      ':keepUntil': p.keepUntilSeconds,
      ':gsi2pk': retry.gsi2pk,
      ':gsi2sk': retry.gsi2sk,
      ...failedIndexValues(p.route, p.key, p.receivedAt),
    },
  });
}

/** A shard's partition of the sparse `failed` index: a route's FAILED records, sharded as the byTime index is. */
export function failedPartition(route: string, shard: number): string {
  return `FAILED#${route}#${shard}`;
}

/** The `failed` index keys of a record. */
export function failedIndexKeys(route: string, key: string, receivedAt: number): { gsi3pk: string; gsi3sk: string } {
  return { gsi3pk: failedPartition(route, timeShard(route, key)), gsi3sk: `${new Date(receivedAt).toISOString()}#${key}` };
}

const FAILED_INDEX_NAMES = { '#gsi3pk': EVENTS_TABLE.failedIndex.partitionKey, '#gsi3sk': EVENTS_TABLE.failedIndex.sortKey } as const;
/** The SET clauses that put a FAILED record into the `failed` index (fail, failExhausted). */
const FAILED_INDEX_SET = '#gsi3pk = :gsi3pk, #gsi3sk = :gsi3sk';
function failedIndexValues(route: string, key: string, receivedAt: number): Record<string, string> {
  const k = failedIndexKeys(route, key, receivedAt);
  return { ':gsi3pk': k.gsi3pk, ':gsi3sk': k.gsi3sk };
}

/** Partition of the sparse `parked` index that holds a route's parked records. */
export function parkedPartition(route: string): string {
  return `PARKED#${route}`;
}

/** Partition of the same sparse index that holds a route's records the reconciler could not re-send. */
export function strandedPartition(route: string): string {
  return `RETRY#${route}`;
}

/** The retry-partition keys of a record, in the same sparse index. */
export function strandedIndexKeys(route: string, key: string, receivedAt: number): { gsi2pk: string; gsi2sk: string } {
  return { gsi2pk: strandedPartition(route), gsi2sk: `${new Date(receivedAt).toISOString()}#${key}` };
}

/** The sparse `parked` index keys of a record. */
export function parkedIndexKeys(route: string, key: string, receivedAt: number): { gsi2pk: string; gsi2sk: string } {
  return { gsi2pk: parkedPartition(route), gsi2sk: `${new Date(receivedAt).toISOString()}#${key}` };
}

/**
 * RECEIVED | EXECUTING (lease over, by our clock less twice the clock bound) -> PARKED while
 * the route is paused (the store reads the route's state right after, and unparks the record
 * when a resume came first: no transaction, which MRSC global tables refuse). A parked record is
 * kept a whole TTL from now: work parked on a long pause must not expire before someone resumes
 * the route. Only a genuine body (its SHA-256 the record's fingerprint) is kept.
 */
export function park(p: {
  route: string;
  key: string;
  receivedAt: number;
  nowMs: number;
  ttlSeconds: number;
  payload: Payload;
  fingerprint: string;
  /** @default TAKEOVER_MARGIN_MS */
  takeoverMs?: number;
  /** Parked in its entity's line (its hash) at this place, not by a pause (ports/entity-order.ts). @default - parked by a pause */
  waitingTurn?: { readonly entity: string; readonly place: number };
  /** Parked by a pause on a route ordered per entity: its line (the hash), whose place the reconciler keeps alive with it. @default - none */
  lineEntity?: string;
}): Transition {
  const index = parkedIndexKeys(p.route, p.key, p.receivedAt);
  const kept = keep(p.payload);
  const waiting = p.waitingTurn;
  const line = waiting === undefined && p.lineEntity !== undefined ? p.lineEntity : undefined;
  return withNonce({
    ConditionExpression: `${LIVE} AND ${GENUINE} AND (#status = :received OR (#status = :executing AND leaseUntil <= :takeover))`,
    UpdateExpression:
      `SET #status = :parked, parkedAt = :now, expiresAt = :keepUntil, #gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk${kept.set}` +
      `${waiting === undefined ? '' : ', waitingTurn = :turn, lineEntity = :entity'}${line === undefined ? '' : ', lineEntity = :entity'} REMOVE leaseUntil, leaseToken`,
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey, ...kept.names },
    ExpressionAttributeValues: {
      ...kept.values,
      ...live(p.receivedAt, p.nowMs),
      ':received': S.received,
      ':executing': S.executing,
      ':parked': S.parked,
      ':now': p.nowMs,
      ':takeover': p.nowMs - (p.takeoverMs ?? TAKEOVER_MARGIN_MS),
      ':fingerprint': p.fingerprint,
      ':keepUntil': seconds(p.nowMs) + p.ttlSeconds,
      ':gsi2pk': index.gsi2pk,
      ':gsi2sk': index.gsi2sk,
      ...(waiting === undefined ? {} : { ':turn': waiting.place, ':entity': waiting.entity }),
      ...(line === undefined ? {} : { ':entity': line }),
    },
  });
}

/**
 * PARKED -> RECEIVED, after its message was sent (resume and reconciler send first, then
 * unpark, so a failed send leaves the record parked and findable, never RECEIVED with no message).
 * The message just sent may wait 14 days in the queue: the record then lives at least
 * MESSAGE_COVER_SECONDS from now (the follow-up write, conditional-write.ts).
 */
export function unpark(p: { receivedAt: number; nowMs: number }): Transition {
  return withNonce({
    ConditionExpression: '#status = :parked AND receivedAt = :receivedAt',
    UpdateExpression: 'SET #status = :received, lastEnqueuedAt = :now REMOVE #gsi2pk, #gsi2sk, waitingTurn, lineEntity',
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey },
    ExpressionAttributeValues: { ':parked': S.parked, ':received': S.received, ':receivedAt': p.receivedAt, ':now': p.nowMs },
    extendExpiry: { receivedAt: p.receivedAt, keepUntilSeconds: seconds(p.nowMs) + MESSAGE_COVER_SECONDS },
  });
}

/** PARKED stays PARKED, its expiry moved to a whole TTL from now, when it would end before `beforeSeconds`. */
export function keepParked(p: { receivedAt: number; nowMs: number; ttlSeconds: number; beforeSeconds: number }): Transition {
  return withNonce({
    ConditionExpression: '#status = :parked AND receivedAt = :receivedAt AND expiresAt < :before',
    UpdateExpression: 'SET expiresAt = :keepUntil',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: {
      ':parked': S.parked,
      ':receivedAt': p.receivedAt,
      ':before': p.beforeSeconds,
      ':keepUntil': seconds(p.nowMs) + p.ttlSeconds,
    },
  });
}

/**
 * Puts a record the reconciler could not re-send (SQS refused it, or was down) into the
 * sparse retry partition: every later run finds it there, whatever its age, instead of
 * losing sight of it once it leaves the 24 h window. PARKED records keep their own keys.
 */
export function markStranded(p: { route: string; key: string; receivedAt: number }): Transition {
  const retry = strandedIndexKeys(p.route, p.key, p.receivedAt);
  return withNonce({
    ConditionExpression: 'receivedAt = :receivedAt AND #status IN (:received, :executing, :failed)',
    UpdateExpression: 'SET #gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk',
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey },
    ExpressionAttributeValues: {
      ':receivedAt': p.receivedAt,
      ':received': S.received,
      ':executing': S.executing,
      ':failed': S.failed,
      ':gsi2pk': retry.gsi2pk,
      ':gsi2sk': retry.gsi2sk,
    },
  });
}

/** Takes a record out of the retry partition once its message went out. */
export function clearStranded(p: { route: string; receivedAt: number }): Transition {
  return withNonce({
    ConditionExpression: 'receivedAt = :receivedAt AND #gsi2pk = :gsi2pk',
    UpdateExpression: 'REMOVE #gsi2pk, #gsi2sk',
    ExpressionAttributeNames: { '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey },
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt, ':gsi2pk': strandedPartition(p.route) },
  });
}

/**
 * The dead-letter copy `deadLetterId` is on its last receive: SQS moves it to the DLQ next, so
 * the reconciler need not re-send it. Nothing depends on this mark being made: a last receive
 * the executor never saw (it still counts, SQS Developer Guide, "Avoiding inconsistent message
 * processing") moves the copy all the same, and a redrive is recognised by its own stamp (redrive).
 */
export function markDeadLettered(p: { deadLetterId: string }): Transition {
  return withNonce({
    ConditionExpression: '#status = :failed AND deadLetterId = :dl',
    // Its copy is on its way: the record leaves the retry partition that fail put it in.
    UpdateExpression: 'SET deadLettered = :dl REMOVE #gsi2pk, #gsi2sk',
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey },
    ExpressionAttributeValues: { ':failed': S.failed, ':dl': p.deadLetterId },
  });
}

/**
 * FAILED -> RECEIVED with a fresh budget, once per redrive: only a copy that a person made
 * wins, and winning consumes its id, so a second copy of it (or a stray) never runs.
 *
 * What tells a person's copy from ours is its SQS stamp. Every copy of ours (fail's, the
 * reconciler's re-send, the SDK's retry of either, and SQS's own duplicates of them, which
 * keep their SentTimestamp) is stamped within DEAD_LETTER_SEND_SECONDS of the write that won
 * its send, which set lastEnqueuedAt. A redrive (the console's or `dlq redrive`'s move task,
 * or a receive-send-delete) makes a new message with a new enqueue time (SQS Developer Guide,
 * "Learn how to configure a dead-letter queue redrive"). So the copy wins only when it was
 * stamped more than DEAD_LETTER_STAMP_MARGIN_MS after the last send; a resend that raced it
 * (lastEnqueuedAt moved on) makes it lose, and it goes back to the DLQ for the next redrive.
 *   t0 fail, copy A sent (stamp ~t0) | A's receives: handed back, A moves to the DLQ
 *   | t1 > t0 + margin: a person's redrive, copy B stamped t1: wins
 *   | a duplicate of A, any time: stamped ~t0, loses; it is handed back and joins the DLQ.
 * The redriven work waits on the queue again: the record lives at least MESSAGE_COVER_SECONDS
 * from now (`keepUntilSeconds`).
 */
export function redrive(p: {
  receivedAt: number;
  nowMs: number;
  deadLetterId: string;
  stampedAtMs: number;
  keepUntilSeconds: number;
  /** @default DEAD_LETTER_STAMP_MARGIN_MS */
  stampMarginMs?: number;
  /**
   * A person's tool that sends the work itself after this write (`retryproof redrive`): the
   * record enters the retry partition here, so that if the tool dies before its send the
   * reconciler finds it, whatever its age. A DLQ copy needs none: it is the message.
   * @default - the record's retry-partition keys are left as they are
   */
  strandUntilSent?: { route: string; key: string };
}): Transition {
  const strand = p.strandUntilSent === undefined ? undefined : strandedIndexKeys(p.strandUntilSent.route, p.strandUntilSent.key, p.receivedAt);
  return withNonce({
    ConditionExpression: `${LIVE} AND #status = :failed AND deadLetterId = :dl AND lastEnqueuedAt < :sentBefore`,
    UpdateExpression:
      'SET #status = :received, attempts = :zero, lastEnqueuedAt = :now, redrivenAt = :now, expiresAt = :keepUntil' +
      `${strand === undefined ? '' : ', #gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk'} ` +
      'REMOVE deadLetterId, deadLettered, #gsi3pk, #gsi3sk ADD redrives :one',
    ExpressionAttributeNames: { ...STATUS, ...FAILED_INDEX_NAMES, ...(strand === undefined ? {} : { '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey }) },
    ExpressionAttributeValues: {
      ...(strand === undefined ? {} : { ':gsi2pk': strand.gsi2pk, ':gsi2sk': strand.gsi2sk }),
      ...live(p.receivedAt, p.nowMs),
      ':failed': S.failed,
      ':received': S.received,
      ':dl': p.deadLetterId,
      ':sentBefore': p.stampedAtMs - (p.stampMarginMs ?? DEAD_LETTER_STAMP_MARGIN_MS),
      ':keepUntil': p.keepUntilSeconds,
      ':now': p.nowMs,
      ':zero': 0,
      ':one': 1,
    },
  });
}

export interface ResendParams {
  readonly receivedAt: number;
  readonly nowMs: number;
  /** Only a record whose last message is older than this may be re-sent. */
  readonly sentBeforeMs: number;
  /** The answer a duplicate gets from now on: the resend puts the work back on its way. */
  readonly answer: StoredAnswer;
  /** The reconciler also re-sends the dead-letter copy of a FAILED record that never left. */
  readonly includeFailed: boolean;
  /**
   * The record answers a 5xx of ours (a send failed): the resend ends that, and the breaker's
   * repeat count goes on from the value recordEnqueueFailure froze. The write holds only
   * while the answer is still what the caller saw, so the count never jumps.
   */
  readonly answeredFailure: boolean;
}

/**
 * Wins the right to send one more message for a record, at most once per window: two
 * duplicates, or two reconcilers, racing here send once. Then the caller sends.
 *  - RECEIVED: its last message is older than the window, or our last answer was a 5xx
 *    (the first send failed), so there may be no message at all;
 *  - EXECUTING: its lease ended before the window and nothing was sent since (the worker
 *    died and its message is gone, say after the backstop moved it to the DLQ);
 *  - FAILED (reconciler only): its dead-letter copy never reached the DLQ. The copy must be
 *    sent within DEAD_LETTER_SEND_SECONDS of this write (the send aborted then, and left to a
 *    later run), or a redrive could not tell it from a person's (see redrive).
 * The message may wait 14 days in a queue: the record then lives at least MESSAGE_COVER_SECONDS
 * from now (the follow-up write, conditional-write.ts).
 */
export function claimResend(p: ResendParams): Transition {
  const failedBranch = p.includeFailed
    ? ' OR (#status = :failed AND attribute_exists(deadLetterId) AND attribute_not_exists(deadLettered) AND lastEnqueuedAt < :before)'
    : '';
  return withNonce({
    ConditionExpression:
      `${LIVE} AND answerStatus ${p.answeredFailure ? '>=' : '<'} :serverError AND (` +
      '(#status = :received AND (answerStatus >= :serverError OR lastEnqueuedAt < :before)) OR ' +
      `(#status = :executing AND leaseUntil < :before AND lastEnqueuedAt < :before)${failedBranch})`,
    UpdateExpression:
      'SET lastEnqueuedAt = :now, answerStatus = :answerStatus, answerBody = :answerBody' +
      // Ends a 5xx of ours: the count stays frozen until the resend's sender answers (markAnswered).
      (p.answeredFailure ? ', repeatBase = :frozen' : '') +
      ' ADD resends :one',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: {
      ...live(p.receivedAt, p.nowMs),
      ':received': S.received,
      ':executing': S.executing,
      ...(p.includeFailed ? { ':failed': S.failed } : {}),
      ':serverError': 500,
      ':before': p.sentBeforeMs,
      ':now': p.nowMs,
      ':answerStatus': p.answer.status,
      ':answerBody': p.answer.body,
      ':one': 1,
      ...(p.answeredFailure ? { ':frozen': COUNT_FROZEN } : {}),
    },
    // The message about to go out may wait 14 days in the queue (or, a dead-letter copy, in the DLQ).
    extendExpiry: { receivedAt: p.receivedAt, keepUntilSeconds: seconds(p.nowMs) + MESSAGE_COVER_SECONDS },
  });
}

/**
 * A send failed after the record was written or a resend was won: store the 5xx we answer,
 * so the sender's retry re-sends at once instead of waiting out the window. A live breaker
 * count is frozen into `repeats` and repeatBase set to COUNT_FROZEN: retries of this 5xx are
 * ours, not the sender's, and the lease of a message the failed send may still have landed
 * starts no count. Update expressions cannot branch on an attribute, so there are four forms:
 * `counting` or not, and `taken` (a worker leased such a message already: only the count is
 * frozen, the record keeps its state and answer) or RECEIVED; each is conditioned on its case,
 * and the store tries the one it expects and, refused by another case, that one. A record that
 * answers a 5xx already is left as it is.
 */
export function recordEnqueueFailure(p: { receivedAt: number; answer: StoredAnswer; payload: Payload; counting: boolean; taken?: boolean }): Transition {
  const kept = keep(p.payload);
  const freeze = `${p.counting ? 'repeats = hits - repeatBase, ' : ''}repeatBase = :frozen`;
  return {
    // A record that answers a 5xx already keeps the payload already.
    ConditionExpression:
      `#status ${p.taken === true ? '<>' : '='} :received AND receivedAt = :receivedAt AND answerStatus < :serverError AND ` +
      (p.counting ? COUNTING : NOT_COUNTING),
    UpdateExpression: p.taken === true ? `SET ${freeze}` : `SET answerStatus = :status, answerBody = :answerBody, ${freeze}${kept.set}`,
    ExpressionAttributeNames: p.taken === true ? STATUS : { ...STATUS, ...kept.names },
    ExpressionAttributeValues: {
      ...(p.taken === true ? {} : { ...kept.values, ':status': p.answer.status, ':answerBody': p.answer.body }),
      ':received': S.received,
      ':receivedAt': p.receivedAt,
      ':serverError': 500,
      ':zero': 0,
      ':frozen': COUNT_FROZEN,
    },
  };
}

/**
 * A duplicate found the record RECEIVED, never taken by a worker, its payload not kept: the
 * first delivery's function may have died between its claim and its send. The record keeps
 * the payload before this duplicate answers 2xx, so that a record we acknowledged can always
 * be sent again from the table (by a later duplicate or the reconciler). A refused write
 * means a worker took it (its message existed) or the payload is kept already.
 */
export function keepPayload(p: { receivedAt: number; payload: Payload }): Transition {
  const kept = keep(p.payload);
  return {
    ConditionExpression: 'receivedAt = :receivedAt AND #status = :received AND runs = :zero AND attribute_not_exists(#body)',
    UpdateExpression: `SET ${kept.set.slice(2)}`,
    ExpressionAttributeNames: { ...STATUS, ...kept.names },
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt, ':received': S.received, ':zero': 0, ...kept.values },
  };
}

/**
 * This generation of the key tripped its route's circuit breaker: set once, by the one
 * caller that then sends the notice. Later repeats of the key leave the route alone, even
 * after an operator resumes it; a key whose trip never got this far (the pause write
 * failed, the function died) trips again on its next repeat. It carries the write nonce: a
 * mark that committed and lost its answer is still ours when the SDK's retry is refused.
 */
export function markBreakerTripped(p: { receivedAt: number; nowMs: number }): Omit<Transition, 'ExpressionAttributeNames'> {
  return {
    ConditionExpression: 'receivedAt = :receivedAt AND attribute_not_exists(breakerTrippedAt)',
    UpdateExpression: `SET breakerTrippedAt = :now, ${WRITE_ID} = ${WRITE_ID_VALUE}`,
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt, ':now': p.nowMs, [WRITE_ID_VALUE]: newWriteId() },
  };
}

/**
 * An answer below 500 is about to be given for this generation, and none stands (no
 * repeatBase: the record is fresh, or its count was frozen by a 5xx of ours): the last write
 * before the answer, made once the work is on its way (after the send, or finding it sent).
 * From here the breaker counts the deliveries that arrive after it: repeatBase = hits -
 * repeats (the frozen count, 0 on a fresh record), and `answeredAt` the mark's own time (the
 * writer's clock as it writes). A function that dies before this write gave no answer, and its
 * sender's retry is not a repeat. Refused: another copy answered first (the count runs
 * already), the answer became a 5xx meanwhile, or an SDK retry met this write committed.
 *   t0 claim (hits 1) | t1 copy B claims (hits 2, not a repeat) | t2 markAnswered: repeatBase 2
 *   | t3 copy C claims (hits 3): repeats 1
 * A copy whose claim lands after the mark but that arrived before it (its SDK retries held it,
 * or it raced the answer within the clock bound) is no repeat either: see excuseRacingCopy.
 */
export function markAnswered(p: { receivedAt: number; markAtMs: number }): Omit<Transition, 'ExpressionAttributeNames'> {
  return {
    ConditionExpression: `receivedAt = :receivedAt AND ${NOT_COUNTING} AND answerStatus < :serverError`,
    UpdateExpression: 'SET repeatBase = hits - if_not_exists(repeats, :zero), answeredAt = :markAt',
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt, ':serverError': 500, ':zero': 0, ':markAt': p.markAtMs },
  };
}

/**
 * A copy claimed while the count ran, but that arrived (its own clock at its start) less than
 * twice the clock bound after the mark (`answeredAt`, another machine's clock): it may have
 * arrived before the answer was given, a copy racing it, so it is no repeat. Its claim counted
 * a hit (or, sent by the SDK `hits` times, up to that many); this moves repeatBase on by them, so that no later count includes it. Only for this
 * counting episode (`answeredAt` as the copy saw it). It carries the write nonce: the SDK's
 * retry of a committed excuse is refused by it (writeId ours), and counts as done, never twice.
 */
export function excuseRacingCopy(p: { receivedAt: number; answeredAt: number; hits: number }): Omit<Transition, 'ExpressionAttributeNames'> {
  return {
    ConditionExpression:
      `receivedAt = :receivedAt AND ${COUNTING} AND answeredAt = :answeredAt AND ` +
      `(attribute_not_exists(${WRITE_ID}) OR ${WRITE_ID} <> ${WRITE_ID_VALUE})`,
    UpdateExpression: `SET repeatBase = repeatBase + :hits, ${WRITE_ID} = ${WRITE_ID_VALUE}`,
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt, ':answeredAt': p.answeredAt, ':hits': p.hits, ':zero': 0, [WRITE_ID_VALUE]: newWriteId() },
  };
}

/**
 * A claim the ingest gave up on (it answers 5xx) after SDK attempts that may have committed:
 * each may have counted a hit while a count ran, and the sender's retry of our failure follows
 * no answer of ours. This moves repeatBase on by them; one that never landed makes a missed
 * count, never a false one (seed 1580). It carries the write nonce, as excuseRacingCopy does.
 */
export function excuseFailedClaim(p: { hits: number }): Omit<Transition, 'ExpressionAttributeNames'> {
  return {
    ConditionExpression: `${COUNTING} AND (attribute_not_exists(${WRITE_ID}) OR ${WRITE_ID} <> ${WRITE_ID_VALUE})`,
    UpdateExpression: `SET repeatBase = repeatBase + :hits, ${WRITE_ID} = ${WRITE_ID_VALUE}`,
    ExpressionAttributeValues: { ':hits': p.hits, ':zero': 0, [WRITE_ID_VALUE]: newWriteId() },
  };
}

/**
 * RECEIVED -> absent (a DeleteItem): the generation just created for a body that the replay
 * memory (replay-memory.ts) shows an earlier, expired generation accepted. It is a capture
 * replayed after its record expired, on a scheme that signs no timestamp. It never ran and
 * never will: nothing was sent for it and no payload kept (the condition), so taking it back
 * leaves the key as it was before the replay, and the memory keeps refusing the body. This is
 * no error path's delete: it only ever removes a record that no answer and no work depends on.
 */
export function forgetReplay(p: { receivedAt: number }): Omit<Transition, 'UpdateExpression'> {
  return {
    ConditionExpression: 'receivedAt = :receivedAt AND #status = :received AND runs = :zero AND attribute_not_exists(#body)',
    ExpressionAttributeNames: { ...STATUS, '#body': 'body' },
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt, ':received': S.received, ':zero': 0 },
  };
}
