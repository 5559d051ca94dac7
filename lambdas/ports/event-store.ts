import type { EventRecord, Payload, StoredAnswer } from '../domain/event-record.ts';

/** The outcome of claimKey, the one write that claims a key or counts one more delivery of it. */
export type ClaimResult =
  /**
   * This delivery created the record. `retried`: the claim committed, lost its answer and was
   * sent again by the SDK, which found our own record (its claimId) and counted one more hit;
   * it is still ours to send and answer 202.
   */
  | { readonly kind: 'created'; readonly retried?: boolean }
  /**
   * The key is taken and live: the record as it stood before this delivery, returned by
   * the same write, which also counted this delivery's hit (unless the fingerprints differ:
   * then it wrote nothing). `answered`: an answer below 500 stood when this delivery was claimed
   * (record-transitions.ts, markAnswered), and `answeredAt` is when it was marked (the marker's
   * clock): a delivery that arrived twice the clock bound after it is a repeat the circuit
   * breaker counts; one that arrived sooner may have raced the answer (excuseRacingCopy).
   * `attempts`: how many of the SDK's attempts of the claim may have counted this delivery's
   * hit: the last, and each retried after an answer that was no client error (a 5xx, a timeout),
   * which may have committed; then the record returned may count this delivery already.
   */
  | {
      readonly kind: 'exists';
      readonly record: EventRecord;
      readonly answered: boolean;
      readonly answeredAt?: number;
      readonly attempts?: number;
    };

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

/** A claim the store gave up on; `uncertain` of its attempts may have committed, each counting a hit. */
export class ClaimFailedError extends Error {
  readonly uncertain: number;
  constructor(uncertain: number, options?: ErrorOptions) {
    super(`claimKey failed after ${uncertain} attempts that may have committed`, options);
    this.name = 'ClaimFailedError';
    this.uncertain = uncertain;
  }
}

/** The ingest's view of the events table. */
export interface IngestEventStore {
  /**
   * Creates the record if the key is absent, in ONE write; on a live key the same write
   * counts the delivery and returns the record as it stood, with no extra read or write.
   * Only an expired record costs a second request (it is replaced by a new generation).
   * Throws ClaimFailedError when the SDK gives up.
   */
  claimKey(record: EventRecord, nowMs: number): Promise<ClaimResult>;
  /** A failed claim's hits, which its attempts may have counted: no count includes them (record-transitions.ts, excuseFailedClaim). */
  excuseFailedClaim(route: string, key: string, hits: number): Promise<void>;
  /**
   * True for the one caller that marks this generation of the key as having tripped its
   * route's circuit breaker (see record-transitions.ts, markBreakerTripped).
   */
  markBreakerTripped(route: string, key: string, receivedAt: number, nowMs: number): Promise<boolean>;
  /** True for the one caller that may re-send this record's message now (see record-transitions.ts, claimResend). */
  claimResend(route: string, key: string, request: ResendRequest): Promise<boolean>;
  /**
   * Stores a 5xx answer after a failed SQS send, so the sender's retry re-sends at once, and
   * keeps the payload, so the reconciler can send it if nobody retries. A live breaker count is
   * frozen; `counting` is whether the caller expects one (the store copes when it is wrong).
   * @default counting false
   */
  recordEnqueueFailure(route: string, key: string, receivedAt: number, answer: StoredAnswer, payload: Payload, counting?: boolean): Promise<void>;
  /**
   * Keeps the payload on a record no worker has taken yet (see record-transitions.ts,
   * keepPayload): its first message may never have gone out.
   */
  keepPayload(route: string, key: string, receivedAt: number, payload: Payload): Promise<void>;
  /**
   * The last write before an answer below 500, when none stands yet: the circuit breaker
   * counts the deliveries that arrive after it (record-transitions.ts, markAnswered).
   * `budgetMs`: how long the mark may still take, read as the request goes out (the caller
   * counts it from the stamp `markAtMs`, and keeps the invocation's reserve); the request is
   * aborted then, and with none left the mark is not made (throws). At most MARK_ANSWERED_MAX_MS.
   */
  markAnswered(route: string, key: string, receivedAt: number, markAtMs: number, budgetMs?: () => number): Promise<void>;
  /**
   * A copy claimed after the mark that may have arrived before the answer: no repeat, and no
   * later count includes it (record-transitions.ts, excuseRacingCopy).
   */
  excuseRacingCopy(route: string, key: string, receivedAt: number, answeredAt: number, hits?: number): Promise<void>;
  /**
   * The generation before the one created at `receivedAt` whose work a worker took (its
   * receivedAt), from the replay memory: a capture replayed after its record expired. Undefined
   * when no earlier generation's work ran (store/replay-memory.ts).
   */
  takenBefore(route: string, fingerprint: string, receivedAt: number): Promise<number | undefined>;
  /** Takes back a replay's new generation, which never ran (record-transitions.ts, forgetReplay). */
  forgetReplay(route: string, key: string, receivedAt: number): Promise<void>;
}
