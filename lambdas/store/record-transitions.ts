/**
 * Every state transition of an event record, each one conditional write, side by side
 * (protocol v2; README "The record's state machine"). The stores only send these; no
 * other code moves a record. Each condition is the whole rule for its transition:
 *
 *   claimKey        absent -> RECEIVED; live -> the same record, its hit counted (ingest;
 *                   one UpdateItem for new and duplicate deliveries alike)
 *   claimExpiredKey expired -> RECEIVED, a new generation (ingest; the rare second request)
 *   acquireLease    RECEIVED | PARKED | EXECUTING with its lease over,
 *                   attempts < maxAttempts                             -> EXECUTING   (executor)
 *   complete        EXECUTING under this lease token                   -> COMPLETED   (executor)
 *   release         EXECUTING under this lease token                   -> RECEIVED    (executor, retryable error)
 *   fail            EXECUTING under this lease token                   -> FAILED      (executor, permanent or last attempt;
 *                                                                                     in the retry partition until its copy leaves)
 *   failExhausted   as acquireLease, but attempts >= maxAttempts       -> FAILED      (executor: the last attempt's worker died)
 *   park            RECEIVED | EXECUTING with its lease over           -> PARKED      (executor, route paused)
 *   unpark          PARKED                                             -> RECEIVED    (route resume, reconciler)
 *   redrive         FAILED whose dead-letter copy reached the DLQ,
 *                   and this copy is it                                -> RECEIVED    (executor, a person's redrive)
 *
 * And the writes that keep a state but guard a side effect:
 *   claimResend     a RECEIVED record whose message is lost, an EXECUTING one whose lease
 *                   ended long ago, a FAILED one whose dead-letter copy never left: at
 *                   most one resend per window (ingest, reconciler)
 *   markDeadLettered  the dead-letter copy's last receive before SQS moves it to the DLQ
 *   keepParked      a PARKED record's expiry moves on while its route stays paused
 *   markStranded    a record the reconciler could not re-send enters the sparse retry
 *                   partition, so it is found again after it leaves the 24 h window
 *   clearStranded   and leaves it once a re-send went out (acquireLease also drops it)
 *   recordEnqueueFailure  a send failed: the record answers 5xx until a resend is won
 *   keepPayload     a duplicate found the work not yet taken by any worker: its first message
 *                   may never have gone out, so the record keeps the payload before we answer
 *
 * The payload (body and kept headers) travels in the work message; the claim does not
 * write it. The record keeps it where work may have to be sent again from the table alone:
 * recordEnqueueFailure, keepPayload, park, fail, failExhausted, and a lease taken on a
 * message's second receive or later (its first run's worker may have died). Once kept, it
 * is not written again (if_not_exists).
 *
 * The circuit breaker's `repeats` (deliveries after we had answered below 500) is derived,
 * never counted by a write of its own: while the answer is below 500, repeats = hits -
 * repeatBase, where repeatBase is the number of deliveries that were not repeats (the first,
 * and each retry of a 5xx of ours). recordEnqueueFailure freezes the count into `repeats`
 * when the answer becomes a 5xx; the resend that ends it (claimResend, answeredFailure)
 * moves repeatBase so that the count goes on from there. claimKey's one write both counts
 * the hit and returns the record as it stood, so a duplicate knows its repeat count at once.
 *
 * "This generation" is `receivedAt = :receivedAt`: a key reused after its record expired
 * is a new record, and a message minted for the old one must never touch it.
 */
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { Payload, StoredAnswer } from '../domain/event-record.ts';
import { EVENTS_TABLE } from './table-schema.ts';

/** The condition and update of one transition, without its table and key. */
export type Transition = Required<
  Pick<UpdateCommandInput, 'ConditionExpression' | 'UpdateExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>
>;

const S = RECORD_STATUS;
const PARKED_INDEX = EVENTS_TABLE.parkedIndex;
const STATUS = { '#status': 'status' } as const;

const PAYLOAD_NAMES = { '#body': 'body', '#bodyEncoding': 'bodyEncoding', '#headers': 'headers' } as const;

/** The SET clauses (each led by a comma) that keep a payload on the record, once: a kept one is never written again. */
function keep(payload: Payload | undefined): { set: string; names: Record<string, string>; values: Record<string, unknown> } {
  if (payload === undefined) return { set: '', names: {}, values: {} };
  return {
    set: ', #body = if_not_exists(#body, :body), #bodyEncoding = if_not_exists(#bodyEncoding, :bodyEncoding), #headers = if_not_exists(#headers, :headers)',
    names: PAYLOAD_NAMES,
    values: { ':body': payload.body, ':bodyEncoding': payload.bodyEncoding, ':headers': payload.headers },
  };
}

/** Epoch seconds of an instant, as `expiresAt` holds them. */
function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** This generation of the key, and not expired: every transition but claimKey starts here. */
const LIVE = 'receivedAt = :receivedAt AND expiresAt > :nowSeconds';
/** Waiting to run: RECEIVED, PARKED (its route was resumed), or EXECUTING by a worker whose lease ran out. */
const RUNNABLE = '(#status IN (:received, :parked) OR (#status = :executing AND leaseUntil <= :now))';

function live(receivedAt: number, nowMs: number): Record<string, unknown> {
  return { ':receivedAt': receivedAt, ':nowSeconds': seconds(nowMs) };
}

/** The values of LIVE, RUNNABLE and the budget, shared by acquireLease and failExhausted. */
function runnable(p: { receivedAt: number; nowMs: number; maxAttempts: number }): Record<string, unknown> {
  return {
    ...live(p.receivedAt, p.nowMs),
    ':maxAttempts': p.maxAttempts,
    ':received': S.received,
    ':parked': S.parked,
    ':executing': S.executing,
    ':now': p.nowMs,
  };
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
 * Only attributes that no later transition removes may be set here: a duplicate would put a
 * removed one back.
 */
export function claimKey(p: { item: Readonly<Record<string, unknown>>; nowMs: number }): Transition {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':nowSeconds': seconds(p.nowMs), ':one': 1 };
  const sets: string[] = [];
  let i = 0;
  for (const [name, value] of Object.entries(p.item)) {
    if (name === 'pk' || name === 'sk' || name === 'hits' || value === undefined) continue;
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
 * delivery starts a new generation (a whole new item, PutItem). It fails when another
 * delivery started one first: then this one is a duplicate of that, and claims again.
 */
export function claimExpiredKey(nowMs: number): { ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> } {
  return {
    ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :nowSeconds',
    ExpressionAttributeValues: { ':nowSeconds': seconds(nowMs) },
  };
}

export interface LeaseParams {
  readonly receivedAt: number;
  readonly nowMs: number;
  readonly leaseMs: number;
  /** Fresh for every lease; every later write of the attempt is fenced by it. */
  readonly token: string;
  readonly maxAttempts: number;
  /** Kept on the record when this is not the message's first receive: its first run's worker may have died. */
  readonly payload?: Payload;
}

/**
 * RECEIVED | PARKED | EXECUTING (lease over) -> EXECUTING: the DynamoDB form of SKIP LOCKED.
 * It spends one attempt of the budget (and counts one more run in all, across redrives), and
 * drops the parked index keys of a PARKED record.
 */
export function acquireLease(p: LeaseParams): Transition {
  const kept = keep(p.payload);
  return {
    ConditionExpression: `${LIVE} AND attempts < :maxAttempts AND ${RUNNABLE}`,
    UpdateExpression:
      `SET #status = :executing, leaseUntil = :leaseUntil, leaseToken = :token, claimedAt = :now${kept.set} ` +
      'REMOVE #gsi2pk, #gsi2sk ADD attempts :one, runs :one',
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey, ...kept.names },
    ExpressionAttributeValues: {
      ...runnable(p),
      ...kept.values,
      ':leaseUntil': p.nowMs + p.leaseMs,
      ':token': p.token,
      ':one': 1,
    },
  };
}

/** The fence of every write a worker makes after its lease: its token still holds the record. */
function fenced(token: string, nowMs: number, update: string, values: Record<string, unknown>, names: Record<string, string> = {}): Transition {
  return {
    ConditionExpression: 'leaseToken = :token AND #status = :executing',
    UpdateExpression: update,
    ExpressionAttributeNames: { ...STATUS, ...names },
    ExpressionAttributeValues: { ...values, ':token': token, ':executing': S.executing, ':now': nowMs },
  };
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
 * EXECUTING (this token) -> FAILED, naming the dead-letter copy about to be sent. The send
 * counts as an enqueue, and the record waits in the sparse retry partition until the copy's
 * last receive (markDeadLettered): a copy lost with a crashed worker or a failed send is
 * re-sent by the reconciler, however old the record.
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
}): Transition {
  const retry = strandedIndexKeys(p.route, p.key, p.receivedAt);
  const kept = keep(p.payload);
  return fenced(
    p.token,
    p.nowMs,
    'SET #status = :failed, lastError = :error, lastErrorAt = :now, failedAt = :now, deadLetterId = :dl, lastEnqueuedAt = :now, ' +
      `#gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk${kept.set} REMOVE leaseUntil, leaseToken, deadLettered`,
    { ':failed': S.failed, ':error': p.error, ':dl': p.deadLetterId, ':gsi2pk': retry.gsi2pk, ':gsi2sk': retry.gsi2sk, ...kept.values },
    { '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey, ...kept.names },
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
  payload: Payload;
}): Transition {
  const retry = strandedIndexKeys(p.route, p.key, p.receivedAt);
  const kept = keep(p.payload);
  return {
    ConditionExpression: `${LIVE} AND attempts >= :maxAttempts AND ${RUNNABLE}`,
    UpdateExpression:
      'SET #status = :failed, lastError = :error, lastErrorAt = :now, failedAt = :now, deadLetterId = :dl, lastEnqueuedAt = :now, ' +
      `#gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk${kept.set} REMOVE leaseUntil, leaseToken, deadLettered`,
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey, ...kept.names },
    ExpressionAttributeValues: {
      ...runnable(p),
      ...kept.values,
      ':failed': S.failed,
      ':error': p.error,
      ':dl': p.deadLetterId,
      ':gsi2pk': retry.gsi2pk,
      ':gsi2sk': retry.gsi2sk,
    },
  };
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
 * RECEIVED | EXECUTING (lease over) -> PARKED while the route is paused (the store checks the
 * route in the same transaction). A parked record is kept a whole TTL from now: work parked
 * on a long pause must not expire before someone resumes the route.
 */
export function park(p: { route: string; key: string; receivedAt: number; nowMs: number; ttlSeconds: number; payload: Payload }): Transition {
  const index = parkedIndexKeys(p.route, p.key, p.receivedAt);
  const kept = keep(p.payload);
  return {
    ConditionExpression: `${LIVE} AND (#status = :received OR (#status = :executing AND leaseUntil <= :now))`,
    UpdateExpression:
      `SET #status = :parked, parkedAt = :now, expiresAt = :keepUntil, #gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk${kept.set} ` +
      'REMOVE leaseUntil, leaseToken',
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey, ...kept.names },
    ExpressionAttributeValues: {
      ...kept.values,
      ...live(p.receivedAt, p.nowMs),
      ':received': S.received,
      ':executing': S.executing,
      ':parked': S.parked,
      ':now': p.nowMs,
      ':keepUntil': seconds(p.nowMs) + p.ttlSeconds,
      ':gsi2pk': index.gsi2pk,
      ':gsi2sk': index.gsi2sk,
    },
  };
}

/**
 * PARKED -> RECEIVED, after its message was sent (resume and reconciler send first, then
 * unpark, so a failed send leaves the record parked and findable, never RECEIVED with no message).
 */
export function unpark(p: { receivedAt: number; nowMs: number }): Transition {
  return {
    ConditionExpression: '#status = :parked AND receivedAt = :receivedAt',
    UpdateExpression: 'SET #status = :received, lastEnqueuedAt = :now REMOVE #gsi2pk, #gsi2sk',
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey },
    ExpressionAttributeValues: { ':parked': S.parked, ':received': S.received, ':receivedAt': p.receivedAt, ':now': p.nowMs },
  };
}

/** PARKED stays PARKED, its expiry moved to a whole TTL from now, when it would end before `beforeSeconds`. */
export function keepParked(p: { receivedAt: number; nowMs: number; ttlSeconds: number; beforeSeconds: number }): Transition {
  return {
    ConditionExpression: '#status = :parked AND receivedAt = :receivedAt AND expiresAt < :before',
    UpdateExpression: 'SET expiresAt = :keepUntil',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: {
      ':parked': S.parked,
      ':receivedAt': p.receivedAt,
      ':before': p.beforeSeconds,
      ':keepUntil': seconds(p.nowMs) + p.ttlSeconds,
    },
  };
}

/**
 * Puts a record the reconciler could not re-send (SQS refused it, or was down) into the
 * sparse retry partition: every later run finds it there, whatever its age, instead of
 * losing sight of it once it leaves the 24 h window. PARKED records keep their own keys.
 */
export function markStranded(p: { route: string; key: string; receivedAt: number }): Transition {
  const retry = strandedIndexKeys(p.route, p.key, p.receivedAt);
  return {
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
  };
}

/** Takes a record out of the retry partition once its message went out. */
export function clearStranded(p: { route: string; receivedAt: number }): Transition {
  return {
    ConditionExpression: 'receivedAt = :receivedAt AND #gsi2pk = :gsi2pk',
    UpdateExpression: 'REMOVE #gsi2pk, #gsi2sk',
    ExpressionAttributeNames: { '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey },
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt, ':gsi2pk': strandedPartition(p.route) },
  };
}

/**
 * The dead-letter copy `deadLetterId` is on its last receive: SQS moves it to the DLQ next.
 * From now on a copy with this id that reaches the executor was redriven by a person.
 */
export function markDeadLettered(p: { deadLetterId: string }): Transition {
  return {
    ConditionExpression: '#status = :failed AND deadLetterId = :dl',
    // Its copy is on its way: the record leaves the retry partition that fail put it in.
    UpdateExpression: 'SET deadLettered = :dl REMOVE #gsi2pk, #gsi2sk',
    ExpressionAttributeNames: { ...STATUS, '#gsi2pk': PARKED_INDEX.partitionKey, '#gsi2sk': PARKED_INDEX.sortKey },
    ExpressionAttributeValues: { ':failed': S.failed, ':dl': p.deadLetterId },
  };
}

/**
 * FAILED -> RECEIVED with a fresh budget, once per redrive: only the copy that reached the
 * DLQ wins, and winning consumes its id, so a second copy of it (or a stray) never runs.
 */
export function redrive(p: { receivedAt: number; nowMs: number; deadLetterId: string }): Transition {
  return {
    ConditionExpression: `${LIVE} AND #status = :failed AND deadLetterId = :dl AND deadLettered = :dl`,
    UpdateExpression:
      'SET #status = :received, attempts = :zero, lastEnqueuedAt = :now, redrivenAt = :now ' +
      'REMOVE deadLetterId, deadLettered ADD redrives :one',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: {
      ...live(p.receivedAt, p.nowMs),
      ':failed': S.failed,
      ':received': S.received,
      ':dl': p.deadLetterId,
      ':now': p.nowMs,
      ':zero': 0,
      ':one': 1,
    },
  };
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
 *  - FAILED (reconciler only): its dead-letter copy never reached the DLQ.
 */
export function claimResend(p: ResendParams): Transition {
  const failedBranch = p.includeFailed
    ? ' OR (#status = :failed AND attribute_exists(deadLetterId) AND attribute_not_exists(deadLettered) AND lastEnqueuedAt < :before)'
    : '';
  return {
    ConditionExpression:
      `${LIVE} AND answerStatus ${p.answeredFailure ? '>=' : '<'} :serverError AND (` +
      '(#status = :received AND (answerStatus >= :serverError OR lastEnqueuedAt < :before)) OR ' +
      `(#status = :executing AND leaseUntil < :before AND lastEnqueuedAt < :before)${failedBranch})`,
    UpdateExpression:
      'SET lastEnqueuedAt = :now, answerStatus = :answerStatus, answerBody = :answerBody' +
      (p.answeredFailure ? ', repeatBase = hits - if_not_exists(repeats, :zero)' : '') +
      ' ADD resends :one',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: {
      ...live(p.receivedAt, p.nowMs),
      ...(p.answeredFailure ? { ':zero': 0 } : {}),
      ':received': S.received,
      ':executing': S.executing,
      ...(p.includeFailed ? { ':failed': S.failed } : {}),
      ':serverError': 500,
      ':before': p.sentBeforeMs,
      ':now': p.nowMs,
      ':answerStatus': p.answer.status,
      ':answerBody': p.answer.body,
      ':one': 1,
    },
  };
}

/**
 * A send failed after the record was written or a resend was won: store the 5xx we answer,
 * so the sender's retry re-sends at once instead of waiting out the window. The breaker's
 * repeat count is frozen into `repeats`: retries of this 5xx are ours, not the sender's.
 * A record that answers a 5xx already is left as it is.
 */
export function recordEnqueueFailure(p: { receivedAt: number; answer: StoredAnswer; payload: Payload }): Transition {
  const kept = keep(p.payload);
  return {
    // A record that answers a 5xx already keeps the payload already.
    ConditionExpression: '#status = :received AND receivedAt = :receivedAt AND answerStatus < :serverError',
    UpdateExpression: `SET answerStatus = :status, answerBody = :answerBody, repeats = hits - if_not_exists(repeatBase, :one)${kept.set}`,
    ExpressionAttributeNames: { ...STATUS, ...kept.names },
    ExpressionAttributeValues: {
      ...kept.values,
      ':received': S.received,
      ':receivedAt': p.receivedAt,
      ':serverError': 500,
      ':one': 1,
      ':status': p.answer.status,
      ':answerBody': p.answer.body,
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
 * failed, the function died) trips again on its next repeat.
 */
export function markBreakerTripped(p: { receivedAt: number; nowMs: number }): Omit<Transition, 'ExpressionAttributeNames'> {
  return {
    ConditionExpression: 'receivedAt = :receivedAt AND attribute_not_exists(breakerTrippedAt)',
    UpdateExpression: 'SET breakerTrippedAt = :now',
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt, ':now': p.nowMs },
  };
}
