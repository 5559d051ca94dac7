/**
 * PARKED and back, and the retry partition: park, unpark, keepParked, markStranded and
 * clearStranded (docs/state-machine.md).
 */
import { MESSAGE_COVER_SECONDS } from '../config/route-config.ts';
import type { Payload } from '../domain/event-record.ts';
import { withNonce, TAKEOVER_MARGIN_MS, S, PARKED_INDEX, STATUS, keep, seconds, LIVE, GENUINE, live, strandedPartition, strandedIndexKeys, parkedIndexKeys } from './record-conditions.ts';
import type { Transition } from './record-conditions.ts';

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
