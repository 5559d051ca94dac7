import type { EventRecord, RecordSummary } from '../domain/event-record.ts';
import type { ExecutionLogEntry } from './execution-store.ts';

/** One Query's worth of a window: the hour bucket and shard it came from. */
export interface WindowPage {
  readonly bucket: string;
  readonly shard: number;
  /** Summaries only: the index carries no payload. */
  readonly records: readonly RecordSummary[];
}

/** The reconciler's view of the events table. It reads windows with Query, never Scan. */
export interface ReconcilerStore {
  /** Every record received in [fromMs, toMs), page by page, bucket by bucket, shard by shard. */
  readWindow(fromMs: number, toMs: number): AsyncIterable<WindowPage>;
  /** One record, for an entry whose record lies outside the window. */
  getRecord(route: string, key: string): Promise<EventRecord | undefined>;
  /**
   * Marks a stuck record as re-enqueued, if it is still stuck and nobody re-enqueued it
   * since `stuckBeforeMs`. True: this caller won and must send the message.
   */
  markReenqueued(record: RecordSummary, nowMs: number, stuckBeforeMs: number): Promise<boolean>;
  /** PARKED back to RECEIVED, for a record left parked on a route that is active again. */
  unpark(record: RecordSummary, nowMs: number): Promise<boolean>;
  appendLog(entry: ExecutionLogEntry): Promise<void>;
}
