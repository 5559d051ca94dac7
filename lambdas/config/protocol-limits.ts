/**
 * The numbers of the protocol: AWS's limits, with their sources, and the margins the design
 * derives from them. Facts of the design, not choices of a route (route-config.ts re-exports them).
 */
import { MAX_BODY_BYTES } from '../domain/body-object.ts';
import type { SignatureSchemeName } from '../domain/signatures/signature-config.ts';

/**
 * The highest rate limit a route may set, per second: its gate is one DynamoDB item that every
 * admission and refusal writes, and one item takes at most 1,000 writes a second (DynamoDB
 * Developer Guide, "Best practices for designing and using partition keys effectively").
 */
export const MAX_RATE_PER_SECOND = 200;
/**
 * SQS's longest DelaySeconds on one message: 15 minutes (SQS API Reference, SendMessage,
 * DelaySeconds: "Valid values: 0 to 900"). Work over a rate limit waits at most this long per
 * deferral, and is deferred again if its turn has not come.
 */
export const SQS_MAX_DELAY_SECONDS = 900;

/** Defaults that are facts of the design, not choices of a route. */
export const DAY_SECONDS = 86_400;
export const DLQ_RETENTION_SECONDS = 14 * DAY_SECONDS;
export const DEFAULT_TTL_SECONDS = 35 * DAY_SECONDS;
export const LEASE_FACTOR = 3;
export const VISIBILITY_TO_TIMEOUT_FACTOR = 6;
/** Lambda's own ceiling on a function's timeout. */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
/** SQS's ceiling on a visibility timeout. */
export const SQS_MAX_VISIBILITY_SECONDS = 12 * 3600;
/**
 * The largest body a route may accept: what Lambda's request limit leaves (domain/body-object.ts).
 * A body above claimCheckAboveBytes travels through the bucket, so neither the record (DynamoDB,
 * 400 KB an item) nor the message (SQS, 256 KiB) carries it.
 */
export const HARD_MAX_BODY_BYTES = MAX_BODY_BYTES;
/** Seconds the executor keeps after an action's deadline for its completion write. */
export const COMPLETION_MARGIN_SECONDS = 10;
/**
 * The bound on how far two machines' clocks (two Lambdas, or a Lambda and SQS) may differ from
 * true time, in seconds (protocol v3, "Clocks differ between machines"). Any comparison of an
 * instant written by another machine with our own clock keeps a margin of twice this, since both
 * clocks may be off by the bound in opposite directions: a lease is taken over only when
 * `leaseUntil <= now - 2 x CLOCK_SKEW_SECONDS`. Lambda's clock is kept by the Amazon Time Sync
 * Service; seconds, not milliseconds, is the conservative bound the seed of this design warned of.
 */
export const CLOCK_SKEW_SECONDS = 5;
/** Twice a clock bound, in ms: an instant another machine wrote is past only this long after it, by our clock. */
export function takeoverMarginMs(clockSkewSeconds: number): number {
  return 2 * clockSkewSeconds * 1000;
}
/** The smallest clock bound a configuration may set: below a second, timer and network jitter alone exceed it. */
export const MIN_CLOCK_SKEW_SECONDS = 1;
/** The largest: past a minute, a clock is broken, not skewed, and every margin would be minutes long. */
export const MAX_CLOCK_SKEW_SECONDS = 60;
/**
 * The ingest function's timeout. It answers in milliseconds; 4 s only bounds a slow DynamoDB or
 * SQS call, well inside API Gateway's 30 s. A delivery's answer, whatever it is, leaves within
 * this of its claim: the breaker counts no copy that arrives sooner (answer-margin.ts).
 */
export const INGEST_TIMEOUT_SECONDS = 4;
/** How old a route's state may be when a worker decides to run its work: a pause reaches the workers up to this late (route-pauses.ts). */
export const ROUTE_STATE_MAX_AGE_MS = 5_000;
/**
 * The longest markAnswered may take, its one attempt aborted then (dynamodb-event-store.ts):
 * the answer goes out at most this long after the instant the mark writes (`answeredAt`).
 */
export const MARK_ANSWERED_MAX_MS = 1_000;
/**
 * The time the ingest keeps after its mark ends, for the answer to leave the function: the mark
 * is aborted this long before the invocation's timeout at the latest, and not made with less
 * than this left. A function killed by its timeout after its mark committed would have marked
 * an answer no sender got, and the sender's retries would count as repeats.
 */
export const MARK_ANSWERED_RESERVE_MS = 1_000;
/**
 * How long after the write that wins it a dead-letter copy's SendMessage may still land: the
 * sender gives the send this long (the SDK's retries included) and aborts it then, so SQS stamps
 * every copy of ours (SentTimestamp) within it. A copy stamped later than this plus twice the
 * clock bound was made by someone else: a person's redrive (a move task gives each message "a
 * new messageID and enqueueTime", SQS Developer Guide, "Learn how to configure a dead-letter
 * queue redrive in Amazon SQS"). A copy the send gave up on is re-sent by the reconciler.
 */
export const DEAD_LETTER_SEND_SECONDS = 2;
/**
 * How long a record must still live after a message for it, or a dead-letter copy, is sent: the
 * queues keep a message 14 days from its enqueue timestamp (a move to the DLQ keeps it: SQS
 * Developer Guide, "Setting-up dead-letter queue retention"; a redrive restarts it), and the
 * reconciler gets a day beyond that to see the record. Every transition that starts a wait on
 * a queue or a person (fail, failExhausted, redrive, a resend, unpark) moves expiresAt at least
 * this far ahead.
 */
export const MESSAGE_COVER_SECONDS = 14 * 86_400 + 86_400;
/**
 * How long an outage of a dependency (DynamoDB, SQS, the function itself) the queue rides out
 * before ordinary work reaches the DLQ: a day. Regional service events are measured in hours;
 * past a day an operator is at work anyway (the queue-age alarm fires within the hour), and the
 * 14-day retention keeps the messages. The default maxReceiveCount covers it (see
 * outageReceiveCount).
 */
export const OUTAGE_HORIZON_SECONDS = 86_400;
/** @default maxAttempts of a route. */
export const DEFAULT_MAX_ATTEMPTS = 5;
/**
 * The action's deadline ends this long before its lease (10% of the lease, 2 to 10 s), so a
 * live worker's completion write lands while it still holds the record. The clock bound needs
 * no room here: the deadline runs on the worker's own timer from the instant before it sent its
 * lease write, and a takeover waits 2 x CLOCK_SKEW_SECONDS past `leaseUntil` by the taker's
 * clock, which is never earlier in true time than the lease's own start plus its length.
 */
export function leaseMarginSeconds(leaseSeconds: number): number {
  return Math.min(10, Math.max(2, Math.ceil(leaseSeconds / 10)));
}
/** The smallest maxReceiveCount that never moves a message whose record still has budget. */
export function backstopReceiveCount(maxAttempts: number): number {
  return 2 * maxAttempts + 2;
}

/**
 * The visibility a message is handed back with after the executor's own dependency failed on
 * its `receiveCount`-th receive: the visibility timeout, doubled with each receive, never past
 * SQS's 12 h ceiling less the function's timeout (the ceiling counts from the receive, and the
 * hand-back comes at most one function timeout after it). A throttled or crashed invocation never
 * gets here: its message comes back after the plain visibility timeout.
 */
export function dependencyBackoffSeconds(receiveCount: number, visibilityTimeoutSeconds: number, functionTimeoutSeconds: number): number {
  const cap = SQS_MAX_VISIBILITY_SECONDS - functionTimeoutSeconds;
  const doubled = visibilityTimeoutSeconds * 2 ** Math.min(Math.max(receiveCount, 1) - 1, 20);
  return Math.max(1, Math.min(cap, doubled));
}

/**
 * Receives a message spends while a dependency is down for `horizonSeconds`, each handed back
 * with dependencyBackoffSeconds: about log2(horizon / visibility) + 1, then one per 12 h.
 */
export function outageReceiveCount(horizonSeconds: number, visibilityTimeoutSeconds: number, functionTimeoutSeconds: number): number {
  let waited = 0;
  let receives = 0;
  while (waited < horizonSeconds) {
    receives++;
    waited += dependencyBackoffSeconds(receives, visibilityTimeoutSeconds, functionTimeoutSeconds);
  }
  return receives;
}

/**
 * How long each scheme's sender retries, from its documentation. These feed the TTL
 * cover check: a key must be remembered for as long as a copy of it can arrive.
 */
export const SENDER_RETRY_WINDOW_SECONDS: Readonly<Record<SignatureSchemeName, number>> = {
  // Standard Webhooks: 5s, 5m, 30m, 2h, 5h, 10h, 10h => about 3 days 3 hours with backoff
  'standard-webhooks': 3 * DAY_SECONDS + 3 * 3600,
  stripe: 3 * DAY_SECONDS, // live mode, up to three days
  github: 3 * DAY_SECONDS, // no automatic retry; manual redeliveries of the last 3 days keep the ids
  shopify: 2 * DAY_SECONDS, // 8 tries over 4 hours today; 19 tries over 48 hours before 2024-04
  slack: 3600, // three retries within about an hour
  'hmac-sha256': 3 * DAY_SECONDS,
};
