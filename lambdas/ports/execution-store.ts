import type { EventRecord, Payload } from '../domain/event-record.ts';

/** The outcome of acquireLease: one conditional update, the record that stood in the way on failure. */
export type LeaseOutcome =
  | { readonly kind: 'leased'; readonly record: EventRecord }
  /** Done already: the message is a duplicate (or a redrive of finished work). */
  | { readonly kind: 'completed'; readonly record: EventRecord }
  /** FAILED is terminal until a person redrives it: the message is a stray. */
  | { readonly kind: 'failed'; readonly record: EventRecord }
  /** Another worker holds a live lease: hand the message back until it ends (the SKIP LOCKED of this design). */
  | { readonly kind: 'locked'; readonly record: EventRecord }
  /** Runnable, but every attempt of the budget is spent: its last worker died. Fail it. */
  | { readonly kind: 'exhausted'; readonly record: EventRecord }
  /** The message's body is not the one the record was accepted with (its SHA-256 is not the fingerprint): run nothing, tell people. */
  | { readonly kind: 'forged'; readonly record: EventRecord }
  /** The record is gone, expired, or a newer generation of the key: never execute blindly. */
  | { readonly kind: 'missing' };

/** The outcome of deferForRate: deferred, or what a lease would have met instead (never `leased`). */
export type DeferOutcome = { readonly kind: 'deferred' } | Exclude<LeaseOutcome, { kind: 'leased' } | { kind: 'exhausted' }>;

/** Names one generation of one key. */
export interface RecordRef {
  readonly route: string;
  readonly key: string;
  /** The record generation the message was minted for. */
  readonly receivedAt: number;
}

export interface LeaseRequest extends RecordRef {
  readonly nowMs: number;
  readonly leaseMs: number;
  /** Fresh for every lease; every later write of this attempt is fenced by it. */
  readonly token: string;
  readonly maxAttempts: number;
  /**
   * SHA-256 of the message's body, hex: the lease is taken only when it is the record's
   * fingerprint. The executor always passes it; a test that takes a lease by hand, with no
   * message, may leave it out. @default - the body is not checked
   */
  readonly fingerprint?: string;
  /** Kept on the record: set when this is not the message's first receive (its first run's worker may have died). */
  readonly payload?: Payload;
  /**
   * On a route ordered per entity: the place whose turn this run is. A person's skip of that place
   * fences it (record-transitions.ts, fenceSkip): the lease is refused, as if locked. @default - not ordered
   */
  readonly linePlace?: number;
  /** The message is the one a new delivery's answer followed (WorkMessage.startsCount): the lease starts the breaker's count. @default false */
  readonly startsCount?: boolean;
}

/** The outcome of parking a message's record while its route is paused. */
export type ParkResult =
  | { readonly kind: 'parked' }
  | { readonly kind: 'already-parked' }
  /** The route was resumed meanwhile: lease and run as usual. */
  | { readonly kind: 'route-active' }
  | Exclude<LeaseOutcome, { kind: 'leased' } | { kind: 'exhausted' }>;

/** One attempt, or one correction, in a record's execution log. */
export interface ExecutionLogEntry {
  readonly route: string;
  readonly key: string;
  readonly receivedAt: number;
  readonly kind: 'execution' | 'reconciliation';
  readonly attempt: number;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly outcome: string;
  readonly error?: { readonly class: string; readonly message: string };
  readonly requestId?: string;
  /** Hash of route, key, action name and input: the same operation has the same fingerprint. */
  readonly operationFingerprint: string;
  readonly detail?: Readonly<Record<string, unknown>>;
  /** Epoch seconds; the record's own expiry. */
  readonly expiresAt: number;
}

export interface FencedWrite {
  readonly route: string;
  readonly key: string;
  readonly token: string;
  readonly nowMs: number;
}

/** The executor's view of the events table. Every write after the lease is fenced by its token. */
export interface ExecutionStore {
  acquireLease(request: LeaseRequest): Promise<LeaseOutcome>;
  /**
   * COMPLETED, only while the token still matches, with the completing attempt logged on the
   * record (no log item of its own). False: fenced out, nothing written.
   */
  complete(write: FencedWrite & { readonly result: string; readonly operationFingerprint: string; readonly requestId?: string }): Promise<boolean>;
  /** Back to RECEIVED after a retryable error with budget left, keeping attempts and the last error. */
  release(write: FencedWrite & { readonly error: string }): Promise<boolean>;
  /**
   * FAILED after a permanent error or the last allowed attempt, naming its dead-letter copy;
   * the record then lives until `keepUntilSeconds` (the copy may wait 14 days in the DLQ).
   */
  fail(write: FencedWrite & DeadLetterWrite & { readonly receivedAt: number }): Promise<boolean>;
  /** FAILED for a record whose budget was spent by workers that died; false when someone else moved it first. */
  failExhausted(
    ref: RecordRef & DeadLetterWrite & { readonly nowMs: number; readonly maxAttempts: number; readonly fingerprint: string },
  ): Promise<boolean>;
  /** The record, read consistently; undefined when absent. */
  get(route: string, key: string): Promise<EventRecord | undefined>;
  /** The dead-letter copy reached its last receive: from now on a copy with this id is a redrive. */
  markDeadLettered(route: string, key: string, deadLetterId: string): Promise<void>;
  /**
   * The replay memory: a worker took the work of the generation created at `receivedAt` for
   * this body (store/replay-memory.ts). Written after the lease and before the action, on routes
   * whose scheme signs no timestamp.
   */
  rememberTaken(route: string, fingerprint: string, receivedAt: number): Promise<void>;
  /**
   * FAILED back to RECEIVED with a fresh budget: true for the one copy that redrives it, a copy
   * SQS stamped (`stampedAtMs`, its SentTimestamp) after every copy of ours (see record-transitions.ts).
   */
  redrive(
    ref: RecordRef & { readonly nowMs: number; readonly deadLetterId: string; readonly stampedAtMs: number; readonly keepUntilSeconds: number },
  ): Promise<boolean>;
  /** A log item: an attempt that did not complete (retryable, permanent, exhausted, fenced out). */
  appendLog(entry: ExecutionLogEntry): Promise<void>;
  /**
   * The route's rate limit refused this run: the record keeps its state and budget, and waits
   * for a wake-up message that comes back at `untilMs` (record-transitions.ts, deferForRate).
   * `deferred`, or what stood in the way, as a lease would see it.
   */
  deferForRate(request: RecordRef & { readonly nowMs: number; readonly untilMs: number; readonly fingerprint: string }): Promise<DeferOutcome>;
  /**
   * Back to RECEIVED from this token's lease, nothing run: the run was ready too late for its
   * rate-limit slot. The attempt the lease spent is handed back (not the run it counted), and the record
   * waits for a wake-up message at `untilMs` (record-transitions.ts, deferLeased).
   */
  deferLeased(write: FencedWrite & { readonly receivedAt: number; readonly untilMs: number }): Promise<boolean>;
  /** PARKED, with the sparse `parked` index keys, unless the record is done, failed or leased. Nothing runs. */
  park(
    request: RecordRef & { readonly nowMs: number; readonly ttlSeconds: number; readonly payload: Payload; readonly fingerprint: string; readonly lineEntity?: string },
  ): Promise<ParkResult>;
  /**
   * PARKED in its entity's line at `place` (a route with `orderBy`): as park, whatever the
   * route's state, and marked `waitingTurn`. `parked` also when it was parked already.
   */
  parkInLine(
    request: RecordRef & { readonly nowMs: number; readonly ttlSeconds: number; readonly payload: Payload; readonly fingerprint: string; readonly entity: string; readonly place: number },
  ): Promise<ParkResult>;
  /** PARKED -> RECEIVED after a wake-up message for it was sent; false when it was no longer parked. */
  unpark(ref: RecordRef, nowMs: number): Promise<boolean>;
}

/** What fail and failExhausted write beside FAILED. */
export interface DeadLetterWrite {
  readonly error: string;
  readonly deadLetterId: string;
  /** Kept, so the reconciler can send the dead-letter copy again from the table. */
  readonly payload: Payload;
  /** Epoch seconds: the later of the record's expiry and MESSAGE_COVER_SECONDS from now. */
  readonly keepUntilSeconds: number;
}
