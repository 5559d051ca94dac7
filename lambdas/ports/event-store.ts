import type { EventRecord, Payload, StoredAnswer } from '../domain/event-record.ts';

/** The outcome of claimKey, the one write that claims a key or counts one more delivery of it. */
export type ClaimResult =
  | { readonly kind: 'created' }
  /**
   * The key is taken and live: the record as it stood before this delivery, returned by
   * the same write, which also counted this delivery's hit (unless the fingerprints differ:
   * then it wrote nothing).
   */
  | { readonly kind: 'exists'; readonly record: EventRecord };

/** A request to send one more message for a record, at most once per window. */
export interface ResendRequest {
  readonly receivedAt: number;
  readonly nowMs: number;
  /** Only a record whose last message is older than this may be re-sent. */
  readonly sentBeforeMs: number;
  /** The answer duplicates get once the work is on its way again. */
  readonly answer: StoredAnswer;
  /** The caller saw a 5xx of ours on the record: the resend ends it (see record-transitions.ts, claimResend). */
  readonly answeredFailure: boolean;
}

/** The ingest's view of the events table. */
export interface IngestEventStore {
  /**
   * Creates the record if the key is absent, in ONE write; on a live key the same write
   * counts the delivery and returns the record as it stood, with no extra read or write.
   * Only an expired record costs a second request (it is replaced by a new generation).
   */
  claimKey(record: EventRecord, nowMs: number): Promise<ClaimResult>;
  /**
   * True for the one caller that marks this generation of the key as having tripped its
   * route's circuit breaker (see record-transitions.ts, markBreakerTripped).
   */
  markBreakerTripped(route: string, key: string, receivedAt: number, nowMs: number): Promise<boolean>;
  /** True for the one caller that may re-send this record's message now (see record-transitions.ts, claimResend). */
  claimResend(route: string, key: string, request: ResendRequest): Promise<boolean>;
  /**
   * Stores a 5xx answer after a failed SQS send, so the sender's retry re-sends at once, and
   * keeps the payload, so the reconciler can send it if nobody retries.
   */
  recordEnqueueFailure(route: string, key: string, receivedAt: number, answer: StoredAnswer, payload: Payload): Promise<void>;
  /**
   * Keeps the payload on a record no worker has taken yet (see record-transitions.ts,
   * keepPayload): its first message may never have gone out.
   */
  keepPayload(route: string, key: string, receivedAt: number, payload: Payload): Promise<void>;
}
