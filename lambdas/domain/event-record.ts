/**
 * The event record and its states. The record is the single source of truth; an SQS message is
 * only a wake-up call for it (docs/architecture.md#record-is-the-truth). Every transition is one
 * conditional write exported by `store/record-transitions.ts`, drawn in docs/state-machine.md.
 */

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

/**
 * A delivery's payload: what its action runs on. A large body is kept in the receiver's bucket
 * (the S3 claim check, domain/body-object.ts): then `bodyObject` points to it and `body` is empty
 * until the executor reads it back.
 */
export interface Payload {
  readonly body: string;
  /** `s3://<bucket>/<name>` of the body's object, when the bucket keeps it. @default - the body is inline */
  readonly bodyObject?: string;
  readonly bodyEncoding: 'utf8' | 'base64';
  /** The headers the route keeps for its action (lowercase names). */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * A delivery's record: its state, and its payload only where the table must carry it. The
 * payload travels in the work message (to the executor, and in a dead-letter copy to the
 * DLQ); the claim does not write it, so no write of a delivery's way to completion carries
 * or rewrites it. The record keeps it (`body`, `bodyEncoding`, `headers`) only when work
 * may have to be sent again from the table: a failed send, a duplicate that found the work
 * not yet taken, a parked or failed record, a retried lease.
 */
export interface EventRecord {
  readonly route: string;
  readonly key: string;
  readonly status: RecordStatus;
  /** SHA-256 of the raw body, hex. */
  readonly fingerprint: string;
  /** The body's size in bytes, kept whether the body is or not. */
  readonly bodyBytes?: number;
  /** The payload, when the record keeps it (see above). */
  readonly body?: string;
  /** A large body's object (Payload.bodyObject), kept with the payload. */
  readonly bodyObject?: string;
  readonly bodyEncoding?: 'utf8' | 'base64';
  readonly headers?: Readonly<Record<string, string>>;
  /** Epoch milliseconds. */
  readonly receivedAt: number;
  /** Epoch seconds; DynamoDB's TTL attribute, and compared in every write condition. */
  readonly expiresAt: number;
  readonly answer: StoredAnswer;
  /** Deliveries of this key, the first included. */
  readonly hits: number;
  /**
   * Deliveries that came after we had answered below 500: what the circuit breaker counts.
   * The store derives it from `hits` (docs/state-machine.md#the-breakers-count); no write counts it.
   */
  readonly repeats?: number;
  /** Epoch milliseconds at which this generation of the key tripped its route's circuit breaker. */
  readonly breakerTrippedAt?: number;
  /** Runs of the action since the record was accepted or last redriven: the retry budget. */
  readonly attempts: number;
  /** Runs of the action in all, across redrives: the attempt number the action and the log see. */
  readonly runs: number;
  /** A person's redrives of this record so far. */
  readonly redrives: number;
  /** Times its run waited for its route's rate limit (deferForRate): none spent an attempt. @default 0 */
  readonly deferrals?: number;
  /**
   * Epoch milliseconds of the last time a live message was known to exist: a send, or a
   * hand-back to RECEIVED. A resend first moves it forward with a conditional write.
   */
  readonly lastEnqueuedAt?: number;
  readonly leaseUntil?: number;
  /**
   * The length of the last lease taken, in seconds: on a route with a time per destination, the
   * one this record's body picked. It stays after the lease ends. @default - no lease taken yet,
   * or taken before records kept it: the route's longest lease applies
   */
  readonly leaseSeconds?: number;
  readonly leaseToken?: string;
  readonly lastError?: string;
  readonly completedAt?: number;
  readonly result?: string;
  /** The dead-letter copy of a FAILED record (see WorkMessage.deadLetterId). */
  readonly deadLetterId?: string;
  /**
   * Set to `deadLetterId` at that copy's last receive before SQS moves it to the DLQ: the
   * reconciler's hint that it left. A redrive does not depend on it (the last receive may be
   * one the executor never saw): a redriven copy is known by its own SQS stamp.
   */
  readonly deadLettered?: string;
  /**
   * PARKED in its entity's line (a route with `orderBy`): the place it holds, waiting for the
   * cursor to reach it (store/dynamodb-entity-order.ts). Not set on work parked by a pause.
   */
  readonly waitingTurn?: number;
  /** With waitingTurn: the hash of the entity whose line it waits in. */
  readonly lineEntity?: string;
}

/**
 * What the reconciler reads of a record in its window: everything but the payload. A
 * completed record is read from the byTime index alone, which does not keep its attempts.
 */
export type RecordSummary = Pick<
  EventRecord,
  'route' | 'key' | 'status' | 'fingerprint' | 'receivedAt' | 'expiresAt' | 'lastEnqueuedAt' | 'leaseUntil' | 'lastError' | 'completedAt'
> & { readonly attempts?: number };

/** The SQS message: the full operation context, so a DLQ message can be audited without the table. */
export interface WorkMessage {
  readonly v: 1;
  readonly route: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly receivedAt: number;
  /** The body; empty when `bodyObject` points to it. */
  readonly body: string;
  /** A large body's object in the receiver's bucket (Payload.bodyObject). @default - the body is inline */
  readonly bodyObject?: string;
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
  /**
   * Set on the message a new delivery's ingest sends before it answers: a worker's lease of it
   * starts the breaker's count (architecture.md#circuit-breaker). A re-send, a wake-up, a redrive
   * follow no answer of ours: they never set it.
   */
  readonly startsCount?: true;
}

/** The public id of a delivery, `<route>/<key>`. */
export function deliveryId(route: string, key: string): string {
  return `${route}/${key}`;
}

/** The answer to a new delivery, recorded and queued: 202, and replayed to its duplicates. */
export function acceptedAnswer(route: string, key: string): StoredAnswer {
  return { status: 202, body: JSON.stringify({ id: deliveryId(route, key), status: 'accepted' }) };
}

/** The hour bucket of an instant, `yyyy-mm-ddThh`. */
export function hourBucket(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 13);
}

/** The payload a record keeps, or undefined when it keeps none (its work message carries it). */
export function keptPayloadOf(record: EventRecord): Payload | undefined {
  if (record.body === undefined) return undefined;
  return {
    body: record.body,
    ...(record.bodyObject === undefined ? {} : { bodyObject: record.bodyObject }),
    bodyEncoding: record.bodyEncoding ?? 'utf8',
    headers: record.headers ?? {},
  };
}

/** The payload a work message carries. */
export function payloadOfMessage(message: WorkMessage): Payload {
  return {
    body: message.body,
    ...(message.bodyObject === undefined ? {} : { bodyObject: message.bodyObject }),
    bodyEncoding: message.bodyEncoding,
    headers: message.headers,
  };
}

/** Builds the message for a record and its payload, as ingest sends it and the reconciler re-sends it. */
export function workMessageOf(record: EventRecord, payload: Payload, startsCount = false): WorkMessage {
  return {
    v: 1,
    route: record.route,
    key: record.key,
    fingerprint: record.fingerprint,
    receivedAt: record.receivedAt,
    body: payload.body,
    ...(payload.bodyObject === undefined ? {} : { bodyObject: payload.bodyObject }),
    bodyEncoding: payload.bodyEncoding,
    headers: payload.headers,
    ...(startsCount ? { startsCount: true } : {}),
  };
}
