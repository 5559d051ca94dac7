/**
 * The event record and its states (DESIGN.md, "Record states"):
 *
 *   (absent | expired) --ingest--> RECEIVED --claim--> EXECUTING --done (token matches)--> COMPLETED
 *                                     ^                  | retryable error: back to RECEIVED
 *                                     |                  | permanent error: FAILED
 *                  resume / redrive --+-- PARKED <-- route paused
 */
import { createHash } from 'node:crypto';
import { EVENTS_TABLE } from '../store/table-schema.ts';

export const RECORD_STATUS = {
  received: 'RECEIVED',
  executing: 'EXECUTING',
  completed: 'COMPLETED',
  failed: 'FAILED',
  parked: 'PARKED',
} as const;
export type RecordStatus = (typeof RECORD_STATUS)[keyof typeof RECORD_STATUS];

/** The answer given to the sender the first time, replayed to every duplicate. */
export interface StoredAnswer {
  readonly status: number;
  readonly body: string;
}

/** Everything needed to execute the work later, or to re-enqueue it from the table alone. */
export interface EventRecord {
  readonly route: string;
  readonly key: string;
  readonly status: RecordStatus;
  /** SHA-256 of the raw body, hex. */
  readonly fingerprint: string;
  readonly body: string;
  readonly bodyEncoding: 'utf8' | 'base64';
  /** The headers the route keeps for its action (lowercase names). */
  readonly headers: Readonly<Record<string, string>>;
  /** Epoch milliseconds. */
  readonly receivedAt: number;
  /** Epoch seconds; DynamoDB's TTL attribute, and compared in every write condition. */
  readonly expiresAt: number;
  readonly answer: StoredAnswer;
  /** Deliveries of this key, the first included. Feeds the circuit breaker. */
  readonly hits: number;
  readonly attempts: number;
  /** Epoch milliseconds of the last SQS send for this record. */
  readonly lastEnqueuedAt?: number;
  readonly leaseUntil?: number;
  readonly leaseToken?: string;
  readonly lastError?: string;
  readonly completedAt?: number;
  readonly result?: string;
  /** The dead-letter copy of this record on its way to the DLQ (see WorkMessage.deadLetterId). */
  readonly deadLetterId?: string;
}

/** What the reconciler reads of a record through the byTime index: everything but the payload. */
export type RecordSummary = Pick<
  EventRecord,
  | 'route'
  | 'key'
  | 'status'
  | 'fingerprint'
  | 'receivedAt'
  | 'expiresAt'
  | 'lastEnqueuedAt'
  | 'leaseUntil'
  | 'attempts'
  | 'lastError'
  | 'completedAt'
>;

/** The SQS message: the full operation context, so a DLQ message can be audited without the table. */
export interface WorkMessage {
  readonly v: 1;
  readonly route: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly receivedAt: number;
  readonly body: string;
  readonly bodyEncoding: 'utf8' | 'base64';
  readonly headers: Readonly<Record<string, string>>;
  /** Filled in on a dead-letter copy: why the work needs a person, after how many attempts. */
  readonly attempts?: number;
  readonly lastError?: string;
  readonly reason?: string;
  /**
   * Marks a dead-letter copy. The executor sends it to the WORK queue and hands it back
   * until the queue's own redrive policy moves it to the DLQ: only messages moved there by
   * SQS have a source queue, so only they can be redriven "to source" from the console.
   */
  readonly deadLetterId?: string;
}

/** The public id of a delivery, `<route>/<key>`. */
export function deliveryId(route: string, key: string): string {
  return `${route}/${key}`;
}

/** Partition key of a record and its execution log: the key is scoped by route. */
export function recordPk(route: string, key: string): string {
  return `EVT#${route}#${key}`;
}

export const RECORD_SK = 'RECORD';

/** The hour bucket of an instant, `yyyy-mm-ddThh`. */
export function hourBucket(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 13);
}

/** A stable shard for a key, so one hour's records spread over the byTime partitions. */
export function timeShard(route: string, key: string, shards: number = EVENTS_TABLE.timeShards): number {
  return createHash('sha256').update(`${route}\u0000${key}`).digest().readUInt32BE(0) % shards;
}

/** The byTime GSI keys of a record. */
export function timeIndexKeys(route: string, key: string, receivedAt: number): { gsi1pk: string; gsi1sk: string } {
  return {
    gsi1pk: `T#${hourBucket(receivedAt)}#${timeShard(route, key)}`,
    gsi1sk: `${new Date(receivedAt).toISOString()}#${route}#${key}`,
  };
}

/** Builds the message for a record, as ingest sends it and the reconciler re-sends it. */
export function workMessageOf(record: EventRecord): WorkMessage {
  return {
    v: 1,
    route: record.route,
    key: record.key,
    fingerprint: record.fingerprint,
    receivedAt: record.receivedAt,
    body: record.body,
    bodyEncoding: record.bodyEncoding,
    headers: record.headers,
  };
}
