/**
 * The mapping between an EventRecord and its DynamoDB item. One place, so the ingest,
 * the executor and the reconciler read and write the same attributes.
 */
import { acceptedAnswer, keptPayloadOf } from '../domain/event-record.ts';
import type { EventRecord, Payload, RecordStatus, RecordSummary } from '../domain/event-record.ts';
import { RECORD_SK, recordPk, timeIndexKeys } from './record-keys.ts';

export type RecordItem = Record<string, unknown>;

/**
 * The item of a record, with its table and GSI keys: as the claim writes it (no payload: the
 * work message carries it), or with the payload when the record keeps one. `timeShards`: the
 * table's byTime partitions an hour (record-keys.ts, timeIndexKeys). An options object, not a
 * number: `records.map((r) => toRecordItem(r))` must not take the array index for it.
 */
export function toRecordItem(record: EventRecord, options: { readonly timeShards?: number } = {}): RecordItem {
  const item: RecordItem = {
    pk: recordPk(record.route, record.key),
    sk: RECORD_SK,
    ...timeIndexKeys(record.route, record.key, record.receivedAt, options.timeShards),
    route: record.route,
    key: record.key,
    status: record.status,
    fingerprint: record.fingerprint,
    receivedAt: record.receivedAt,
    expiresAt: record.expiresAt,
    answerStatus: record.answer.status,
    hits: record.hits,
    // The deliveries that were not repeats: repeats = hits - repeatBase while we answer below 500.
    repeatBase: record.hits - (record.repeats ?? 0),
    attempts: record.attempts,
    runs: record.runs,
    redrives: record.redrives,
  };
  if (record.lastEnqueuedAt !== undefined) item.lastEnqueuedAt = record.lastEnqueuedAt;
  if (record.bodyBytes !== undefined) item.bodyBytes = record.bodyBytes;
  // The accepted answer follows from the route and the key: only another one is stored.
  if (record.answer.body !== acceptedAnswer(record.route, record.key).body) item.answerBody = record.answer.body;
  const payload = keptPayloadOf(record);
  if (payload !== undefined) Object.assign(item, payloadAttributes(payload));
  return item;
}

function str(item: RecordItem, name: string): string {
  const value = item[name];
  if (typeof value !== 'string') throw new Error(`record item has no string ${name}`);
  return value;
}

function num(item: RecordItem, name: string): number {
  const value = item[name];
  if (typeof value !== 'number') throw new Error(`record item has no number ${name}`);
  return value;
}

function optStr(item: RecordItem, name: string): string | undefined {
  const value = item[name];
  return typeof value === 'string' ? value : undefined;
}

function optNum(item: RecordItem, name: string): number | undefined {
  const value = item[name];
  return typeof value === 'number' ? value : undefined;
}

/** Reads a record's summary from its item (no body, no headers). */
export function fromSummaryItem(item: RecordItem): RecordSummary & { readonly attempts: number } {
  return {
    route: str(item, 'route'),
    key: str(item, 'key'),
    status: str(item, 'status') as RecordStatus,
    fingerprint: str(item, 'fingerprint'),
    receivedAt: num(item, 'receivedAt'),
    expiresAt: num(item, 'expiresAt'),
    lastEnqueuedAt: optNum(item, 'lastEnqueuedAt'),
    leaseUntil: optNum(item, 'leaseUntil'),
    attempts: optNum(item, 'attempts') ?? 0,
    lastError: optStr(item, 'lastError'),
    completedAt: optNum(item, 'completedAt'),
  };
}

/**
 * The circuit breaker's count of a record (docs/state-machine.md#the-breakers-count): derived from `hits`
 * while the answer is below 500, frozen in `repeats` while it is a 5xx of ours. A record
 * written before repeatBase existed kept its count in `repeats`.
 */
function repeatsOf(item: RecordItem, hits: number, answerStatus: number): number | undefined {
  const base = optNum(item, 'repeatBase');
  // A negative base is COUNT_FROZEN: a 5xx of ours stopped the count. A base above hits: an
  // excuse for hits that never landed (excuseFailedClaim), a missed count.
  if (answerStatus < 500 && base !== undefined && base >= 0) return Math.max(0, hits - base);
  return optNum(item, 'repeats');
}

/** The attributes a record keeps its payload in. */
export function payloadAttributes(payload: Payload): RecordItem {
  return {
    body: payload.body,
    ...(payload.bodyObject === undefined ? {} : { bodyObject: payload.bodyObject }),
    bodyEncoding: payload.bodyEncoding,
    headers: payload.headers,
  };
}

/** Reads a whole record item back: its summary, and the payload when it keeps one. Throws when a required attribute is missing. */
export function fromRecordItem(item: RecordItem): EventRecord {
  const hits = optNum(item, 'hits') ?? 1;
  const answerStatus = num(item, 'answerStatus');
  return {
    ...fromSummaryItem(item),
    ...(typeof item.body === 'string'
      ? {
          body: item.body,
          ...(typeof item.bodyObject === 'string' ? { bodyObject: item.bodyObject } : {}),
          bodyEncoding: optStr(item, 'bodyEncoding') === 'base64' ? ('base64' as const) : ('utf8' as const),
          headers: (item.headers ?? {}) as Record<string, string>,
        }
      : {}),
    bodyBytes: optNum(item, 'bodyBytes'),
    answer: { status: answerStatus, body: optStr(item, 'answerBody') ?? acceptedAnswer(str(item, 'route'), str(item, 'key')).body },
    hits,
    repeats: repeatsOf(item, hits, answerStatus),
    breakerTrippedAt: optNum(item, 'breakerTrippedAt'),
    runs: optNum(item, 'runs') ?? optNum(item, 'attempts') ?? 0,
    redrives: optNum(item, 'redrives') ?? 0,
    deferrals: optNum(item, 'deferrals'),
    leaseSeconds: optNum(item, 'leaseSeconds'),
    leaseToken: optStr(item, 'leaseToken'),
    result: optStr(item, 'result'),
    deadLetterId: optStr(item, 'deadLetterId'),
    deadLettered: optStr(item, 'deadLettered'),
    waitingTurn: optNum(item, 'waitingTurn'),
    lineEntity: optStr(item, 'lineEntity'),
  };
}
