import type { RecordStatus } from '../domain/event-record.ts';

/** One record in its entity's line: the entity by its hash (domain/entity-order.ts, entityHash). */
export interface LineRef {
  readonly route: string;
  readonly entity: string;
  readonly key: string;
  readonly receivedAt: number;
}

/** What stands at the head of a line that is not a record's turn yet. */
export interface LineHead {
  readonly place: number;
  readonly key: string;
  readonly receivedAt: number;
  /** The head record's state; retrying work is RECEIVED with attempts spent. */
  readonly status: RecordStatus;
  readonly attempts: number;
}

export type Turn =
  /** The cursor stands at this record's place: it may run. */
  | { readonly kind: 'turn'; readonly place: number }
  /** Earlier work of the entity is not done: `head` is the first of it. */
  | { readonly kind: 'wait'; readonly place: number; readonly head: LineHead }
  /**
   * The record holds no place from the cursor on and is not runnable (done, failed, gone): none
   * is given to it, and the lease decides what its message is (a duplicate, a stray copy).
   */
  | {
      readonly kind: 'none';
      /**
       * The record at the cursor, when it waits parked for a wake-up: the worker that moved the
       * line to it may have died before sending one. The caller wakes it.
       */
      readonly waiter?: Waiter;
    };

/** A record that marked its place as waiting: the one to wake when the cursor reaches it. */
export interface Waiter {
  readonly key: string;
  readonly receivedAt: number;
}

/** A line as a person reads it (`retryproof order show`). */
export interface LineView {
  /** The place whose turn it is. */
  readonly next: number;
  /** From the cursor on, in order: each place with its record's state (undefined: gone). */
  readonly places: readonly {
    readonly place: number;
    readonly key: string;
    readonly receivedAt: number;
    readonly waiting: boolean;
    readonly status?: RecordStatus;
    readonly attempts?: number;
  }[];
}

/**
 * The lines of a route ordered per entity (issue 24). Every write is one conditional write on one
 * item: MRSC global tables refuse transactions, and each write recognises its own success.
 */
export interface EntityOrder {
  /**
   * Gives the record the next place in its entity's line: the accepted order. `expiresAt`: the
   * record's (epoch seconds); the place lives as long.
   */
  place(ref: LineRef, nowMs: number, expiresAt: number): Promise<number>;
  /**
   * The record's place from the cursor on, taken now when it has none there: a copy answered 202
   * while the first copy's place may not be taken yet (or failed) must not be answered before it.
   * Should the first copy's place land after this one, the record holds two places; it runs at the
   * first, and the line passes the second once it completed.
   */
  placeIfAbsent(ref: LineRef, nowMs: number, expiresAt: number): Promise<number>;
  /**
   * Whether it is the record's turn. Finds its place from the cursor on (placing it at the end of
   * the line when it has none there: its ingest died before placing it, or a person skipped it and
   * redrove it later), and moves the cursor past heads whose record completed or is gone, so a
   * cursor move lost to a crash is repaired by the next reader. `expiresAt`: what the record's
   * place lives until at least (a whole TTL from now): a place made here gets it, and one found
   * expiring a day sooner is kept on to it, so the line never passes a record that may still run.
   */
  turn(ref: LineRef, nowMs: number, expiresAt: number): Promise<Turn>;
  /**
   * Marks the record's place as waiting, to be woken when the cursor reaches it, and keeps the
   * place until `keepUntilSeconds` (the parked record's own expiry).
   */
  markWaiting(ref: LineRef, place: number, keepUntilSeconds: number): Promise<void>;
  /**
   * Keeps the record's place from the cursor on, and the cursor, alive until `keepUntilSeconds`
   * (never back): work parked on a pause longer than a place's life keeps its place in line.
   */
  keep(ref: LineRef, nowMs: number, keepUntilSeconds: number): Promise<void>;
  /**
   * After the record at `place` completed: the cursor moves to the next place (if it still stands
   * at this one). The next place's record when it is marked waiting, for the caller to wake.
   */
  advance(ref: LineRef, place: number, nowMs: number, ttlSeconds: number): Promise<Waiter | undefined>;
  /** A person moves the cursor past a FAILED (or gone) head; the head skipped, and the next waiter to wake. */
  skip(route: string, entity: string, nowMs: number, ttlSeconds: number): Promise<{ readonly skipped?: LineHead; readonly waiter?: Waiter; readonly refused?: string }>;
  /** The line from its cursor on, at most `limit` places. */
  view(route: string, entity: string, nowMs: number, limit: number): Promise<LineView>;
}
