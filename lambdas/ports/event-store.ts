import type { EventRecord, StoredAnswer } from '../domain/event-record.ts';

/** The outcome of the one conditional write that claims a key. */
export type ClaimResult =
  | { readonly kind: 'created' }
  /** The key is taken and live: the existing record, returned by the same write. */
  | { readonly kind: 'exists'; readonly record: EventRecord };

/** What ingest does after a duplicate: always count it, sometimes note a re-send. */
export interface DuplicateUpdate {
  readonly nowMs: number;
  /** Set when the duplicate re-sent the SQS message. */
  readonly resentAt?: number;
  /** Set when the answer changes, for example from a 503 to a 202 after a successful re-send. */
  readonly answer?: StoredAnswer;
}

/** The ingest's view of the events table. */
export interface IngestEventStore {
  /**
   * Creates the record if the key is absent or expired, in ONE conditional write.
   * Otherwise returns the existing record from that same write, with no extra read.
   */
  claim(record: EventRecord, nowMs: number): Promise<ClaimResult>;
  /** Counts one more delivery of a key. Returns the new count, or undefined if the record is gone. */
  recordDuplicate(route: string, key: string, update: DuplicateUpdate): Promise<number | undefined>;
  /** Stores a 5xx answer after a failed SQS send, so the sender's retry knows to re-send. */
  recordEnqueueFailure(route: string, key: string, answer: StoredAnswer): Promise<void>;
}
