import type { EventRecord, StoredAnswer } from '../domain/event-record.ts';

/** The outcome of claimKey, the one conditional write that claims a key. */
export type ClaimResult =
  | { readonly kind: 'created' }
  /** The key is taken and live: the existing record, returned by the same write. */
  | { readonly kind: 'exists'; readonly record: EventRecord };

/** A key's delivery counts after one more duplicate. */
export interface DuplicateCounts {
  /** Every delivery of the key, the first included. */
  readonly hits: number;
  /**
   * Deliveries that came after we had answered 2xx: the ones the circuit breaker counts.
   * Undefined when this delivery was not one (it retried our 5xx), so it was not counted.
   */
  readonly repeats: number | undefined;
}

/** A request to send one more message for a record, at most once per window. */
export interface ResendRequest {
  readonly receivedAt: number;
  readonly nowMs: number;
  /** Only a record whose last message is older than this may be re-sent. */
  readonly sentBeforeMs: number;
  /** The answer duplicates get once the work is on its way again. */
  readonly answer: StoredAnswer;
}

/** The ingest's view of the events table. */
export interface IngestEventStore {
  /**
   * Creates the record if the key is absent or expired, in ONE conditional write.
   * Otherwise returns the existing record from that same write, with no extra read.
   */
  claimKey(record: EventRecord, nowMs: number): Promise<ClaimResult>;
  /**
   * Counts one more delivery of a key; a `repeat` (it came after we answered 2xx) is also
   * counted for the circuit breaker. Returns the new counts, or undefined if the record is gone.
   */
  recordDuplicate(route: string, key: string, nowMs: number, options: { readonly repeat: boolean }): Promise<DuplicateCounts | undefined>;
  /**
   * True for the one caller that marks this generation of the key as having tripped its
   * route's circuit breaker (see record-transitions.ts, markBreakerTripped).
   */
  markBreakerTripped(route: string, key: string, receivedAt: number, nowMs: number): Promise<boolean>;
  /** True for the one caller that may re-send this record's message now (see record-transitions.ts, claimResend). */
  claimResend(route: string, key: string, request: ResendRequest): Promise<boolean>;
  /** Stores a 5xx answer after a failed SQS send, so the sender's retry re-sends at once. */
  recordEnqueueFailure(route: string, key: string, receivedAt: number, answer: StoredAnswer): Promise<void>;
}
