/**
 * What the record's transitions share: the Transition type, the write nonce, the clock margins,
 * the conditions every transition starts from (LIVE, RUNNABLE, GENUINE, the breaker's count) and
 * the keys of the sparse indexes. The transitions themselves: record-transitions.ts.
 */
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { CLOCK_SKEW_SECONDS, DEAD_LETTER_SEND_SECONDS, MESSAGE_COVER_SECONDS, takeoverMarginMs } from '../config/route-config.ts';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { Payload } from '../domain/event-record.ts';
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
export function withNonce(t: Transition): Transition {
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

export const S = RECORD_STATUS;
export const PARKED_INDEX = EVENTS_TABLE.parkedIndex;
export const STATUS = { '#status': 'status' } as const;

export const PAYLOAD_NAMES = { '#body': 'body', '#bodyEncoding': 'bodyEncoding', '#headers': 'headers' } as const;

/** The SET clauses (each led by a comma) that keep a payload on the record, once: a kept one is never written again. */
export function keep(payload: Payload | undefined): { set: string; names: Record<string, string>; values: Record<string, unknown> } {
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
export function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** This generation of the key, and not expired: every transition but claimKey starts here. */
export const LIVE = 'receivedAt = :receivedAt AND expiresAt > :nowSeconds';
/**
 * Waiting to run: RECEIVED, PARKED (its route was resumed), or EXECUTING by a worker whose lease
 * ran out, by our clock less twice the clock bound (`:takeover`, see TAKEOVER_MARGIN_MS).
 */
export const RUNNABLE = '(#status IN (:received, :parked) OR (#status = :executing AND leaseUntil <= :takeover))';
/** The body in the message is the body the record was accepted with: a forged or altered one never runs or is kept. */
export const GENUINE = 'fingerprint = :fingerprint';
/**
 * `repeatBase` once a 5xx of ours stood: no count runs, and a worker's lease starts none (it
 * writes if_not_exists); only the mark of a resend that answers below 500 starts it again.
 */
export const COUNT_FROZEN = -1;
/** The breaker's count runs (`:zero` bound to 0). */
export const COUNTING = 'repeatBase >= :zero';
export const NOT_COUNTING = '(attribute_not_exists(repeatBase) OR repeatBase < :zero)';

export function live(receivedAt: number, nowMs: number): Record<string, unknown> {
  return { ':receivedAt': receivedAt, ':nowSeconds': seconds(nowMs) };
}

/** The values of LIVE, RUNNABLE and GENUINE (when a fingerprint is given). */
export function waitingToRun(p: { receivedAt: number; nowMs: number; fingerprint?: string; takeoverMs?: number }): Record<string, unknown> {
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
export function runnable(p: { receivedAt: number; nowMs: number; maxAttempts: number; fingerprint?: string; takeoverMs?: number }): Record<string, unknown> {
  return { ...waitingToRun(p), ':maxAttempts': p.maxAttempts, ':now': p.nowMs };
}

/** The fence of every write a worker makes after its lease: its token still holds the record. */
export function fenced(token: string, nowMs: number, update: string, values: Record<string, unknown>, names: Record<string, string> = {}): Transition {
  return withNonce({
    ConditionExpression: 'leaseToken = :token AND #status = :executing',
    UpdateExpression: update,
    ExpressionAttributeNames: { ...STATUS, ...names },
    ExpressionAttributeValues: { ...values, ':token': token, ':executing': S.executing, ':now': nowMs },
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

export const FAILED_INDEX_NAMES = { '#gsi3pk': EVENTS_TABLE.failedIndex.partitionKey, '#gsi3sk': EVENTS_TABLE.failedIndex.sortKey } as const;
/** The SET clauses that put a FAILED record into the `failed` index (fail, failExhausted). */
export const FAILED_INDEX_SET = '#gsi3pk = :gsi3pk, #gsi3sk = :gsi3sk';
export function failedIndexValues(route: string, key: string, receivedAt: number): Record<string, string> {
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
