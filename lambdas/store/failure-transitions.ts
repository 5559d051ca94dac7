/**
 * FAILED and back: fail, failExhausted, the dead-letter copy's last receive, and a person's
 * redrive (docs/state-machine.md).
 */
import type { Payload } from '../domain/event-record.ts';
import { withNonce, DEAD_LETTER_STAMP_MARGIN_MS, S, PARKED_INDEX, STATUS, keep, LIVE, RUNNABLE, GENUINE, live, runnable, fenced, FAILED_INDEX_NAMES, FAILED_INDEX_SET, failedIndexValues, strandedIndexKeys } from './record-conditions.ts';
import type { Transition } from './record-conditions.ts';

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
