/**
 * The S3 claim check: a body too large for the work message (or one SQS cannot carry) is kept
 * as an object of the receiver's bucket, and the message, the record and a dead-letter copy carry
 * only its pointer. Pure rules here: the object's name, the pointer, the body limit, and how long
 * an object must live. The adapter is store/s3-body-objects.ts; the one place that keeps an
 * object alive for the messages that point to it is queue/fresh-body-work-queue.ts.
 */
import { createHash } from 'node:crypto';

const DAY_SECONDS = 86_400;
/** The queues keep a message 14 days, the most SQS allows (config/protocol-limits.ts, DLQ_RETENTION_SECONDS). */
const QUEUE_RETENTION_SECONDS = 14 * DAY_SECONDS;

/**
 * Bodies above this many bytes go to the bucket: below it the work message carries them, SQS's
 * 256 KiB with room kept for a dead-letter copy (queue-limits.ts). A route may lower it
 * (claimCheckAboveBytes), down to 0: every body in the bucket, none in a queue.
 */
export const CLAIM_CHECK_ABOVE_BYTES = 128 * 1024;

/**
 * A synchronous Lambda invocation's request payload: 6 MB, "6 MB each for request and response
 * (synchronous)" (Lambda Developer Guide, "Lambda quotas", function configuration, deployment and
 * execution). API Gateway's HTTP API takes up to 10 MB (API Gateway Developer Guide, "Quotas for
 * configuring and running an HTTP API", payload size), so Lambda's is the bound. The documented
 * figure is 6 MB = 6,291,456 bytes.
 */
export const LAMBDA_SYNC_REQUEST_BYTES = 6_291_456;

/**
 * What the HTTP API's event holds beside the body: the request line and headers (an HTTP API
 * takes 10,240 bytes of them: "Quotas for configuring and running an HTTP API"), JSON-escaped
 * (at most doubled for printable ASCII), the request context, the route and the event's own
 * field names. 32 KiB covers it with room to spare.
 */
export const EVENT_ENVELOPE_RESERVE_BYTES = 32 * 1024;

/**
 * The largest body the receiver accepts: what the Lambda request limit leaves once the envelope
 * is kept apart and the body is base64-encoded, as API Gateway sends a binary body (4 bytes for
 * every 3). 4,694,016 bytes, about 4.48 MiB. A text body (JSON) travels JSON-escaped instead,
 * which is smaller than base64 for ordinary JSON (only `"` and `\` and control characters grow);
 * one made mostly of quotes can exceed Lambda's limit below this figure, and API Gateway then
 * answers it itself, before our function runs (docs/large-payloads.md).
 */
export const MAX_BODY_BYTES = Math.floor((LAMBDA_SYNC_REQUEST_BYTES - EVENT_ENVELOPE_RESERVE_BYTES) / 4) * 3;

/**
 * How long every message that points to an object must find it there after it is sent: a queue
 * keeps a message 14 days from its enqueue (a move to the DLQ keeps that timestamp), and a
 * person's redrive of a dead-letter copy makes a new message that may wait 14 more (SQS
 * Developer Guide, "Setting-up dead-letter queue retention"), and a day for the reconciler.
 */
export const MESSAGE_POINTER_COVER_SECONDS = 2 * QUEUE_RETENTION_SECONDS + DAY_SECONDS;

/**
 * The bucket's lifecycle: an object expires this many days after it was last written (a put, or
 * a renewal, which copies it onto itself). S3 counts from the object's creation and rounds up to
 * the next midnight UTC, and deletes no earlier ("Lifecycle configuration elements", Amazon S3
 * User Guide: "Amazon S3 calculates the time by adding the number of days specified in the rule
 * to the object creation time and rounding the resulting time to the next day midnight UTC").
 * It is the longest TTL of the routes, the pointer cover and two days: a body a record still
 * needs is renewed before a message for it is sent (fresh-body-work-queue.ts) once it is older
 * than bodyObjectRenewAfterSeconds.
 */
export function bodyObjectLifeDays(longestTtlSeconds: number): number {
  return Math.ceil((longestTtlSeconds + MESSAGE_POINTER_COVER_SECONDS) / DAY_SECONDS) + 2;
}

/**
 * An object older than this (by S3's Last-Modified, read against our clock less the clock bound)
 * is renewed before a message that points to it is sent: it then still has at least
 * MESSAGE_POINTER_COVER_SECONDS and a day to live.
 */
export function bodyObjectRenewAfterSeconds(longestTtlSeconds: number): number {
  return bodyObjectLifeDays(longestTtlSeconds) * DAY_SECONDS - MESSAGE_POINTER_COVER_SECONDS - DAY_SECONDS;
}

/**
 * Whether an object last written at `lastWrittenMs` (S3's clock) is due for renewal by `nowMs`
 * (ours): S3's clock may be behind ours by the margin, so the object counts as that much older.
 */
export function renewalDue(lastWrittenMs: number, nowMs: number, renewAfterMs: number, clockMarginMs: number): boolean {
  return nowMs + clockMarginMs - lastWrittenMs > renewAfterMs;
}

/** The longest TTL among routes: what the bucket's lifecycle and the renewals are computed from. */
export function longestTtlSeconds(routes: Iterable<{ readonly ttlSeconds: number }>): number {
  let longest = 0;
  for (const route of routes) longest = Math.max(longest, route.ttlSeconds);
  return longest;
}

/**
 * The object's name: derived from the route, the key and the body's fingerprint, so every copy of
 * one delivery names the same object and a retry neither duplicates nor overwrites it (the write
 * is conditional, If-None-Match). The key is hashed: it may hold characters S3 names avoid, and
 * is up to 255 long.
 */
export function bodyObjectName(route: string, key: string, fingerprint: string): string {
  return `bodies/${route}/${createHash('sha256').update(key).digest('hex')}/${fingerprint}`;
}

/** The pointer a message and a record carry: `s3://<bucket>/<name>`. */
export function bodyObjectPointer(bucket: string, name: string): string {
  return `s3://${bucket}/${name}`;
}

/** The bucket and name of a pointer; undefined when the text is no pointer. */
export function parseBodyObjectPointer(pointer: string): { readonly bucket: string; readonly name: string } | undefined {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(bodies\/.+)$/.exec(pointer);
  if (match === null) return undefined;
  return { bucket: match[1] as string, name: match[2] as string };
}
