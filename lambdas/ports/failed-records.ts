import type { EventRecord } from '../domain/event-record.ts';

/** Which FAILED records of one route a person selects: all are optional, and they add up (AND). */
export interface FailedSelection {
  /** Received at or after this instant (epoch ms). */
  readonly sinceMs?: number;
  /** Received before this instant (epoch ms). */
  readonly untilMs?: number;
  /** The last error holds this text (case-sensitive, as DynamoDB's `contains`). */
  readonly errorContains?: string;
  /** The idempotency key starts with this. */
  readonly keyPrefix?: string;
}

/**
 * A route's FAILED work, found through the sparse `failed` index whatever its age (only FAILED
 * records carry its keys: the hot path never writes it), and taken back by a person.
 */
export interface FailedRecords {
  /** The FAILED records of `route` that match, page by page (Query, never Scan; unordered across shards). */
  listFailed(route: string, selection: FailedSelection): AsyncIterable<readonly EventRecord[]>;
  /**
   * FAILED -> RECEIVED with a fresh budget, through the redrive transition a dead-letter copy
   * uses, stamped `nowMs` by this person's tool: true when this call took it back, false when it
   * is not FAILED (any more) under the dead-letter copy it names. The record enters the retry
   * partition in the same write, so the reconciler re-sends it if the caller dies before its send.
   */
  redrive(record: EventRecord, nowMs: number): Promise<boolean>;
  /**
   * The instant from which a redrive of this record can win: its dead-letter copy was sent when
   * it failed, and until every copy of ours is stamped (the clock margin), a redrive is refused
   * as one that may race it (record-transitions.ts, redrive).
   */
  redrivableFrom(record: EventRecord): number;
}
