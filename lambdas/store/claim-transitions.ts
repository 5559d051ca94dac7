/**
 * The ingest's writes on a record: the claim, a duplicate's resend and kept payload, the 503 of a
 * failed send, the breaker's marks, and a replay taken back (docs/state-machine.md).
 */
import { MESSAGE_COVER_SECONDS } from '../config/route-config.ts';
import type { Payload, StoredAnswer } from '../domain/event-record.ts';
import { WRITE_ID, WRITE_ID_VALUE, newWriteId } from './conditional-write.ts';
import { withNonce, S, STATUS, keep, seconds, LIVE, COUNT_FROZEN, COUNTING, NOT_COUNTING, live } from './record-conditions.ts';
import type { Transition } from './record-conditions.ts';

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
 * count, never a false one. It carries the write nonce, as excuseRacingCopy does.
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
