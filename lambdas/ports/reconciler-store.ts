import type { EventRecord, RecordSummary } from '../domain/event-record.ts';
import type { ResendRequest } from './event-store.ts';
import type { ExecutionLogEntry, RecordRef } from './execution-store.ts';
import type { ParkedRecords } from './parked-records.ts';

/** One Query's worth of a window: the hour bucket and shard it came from. */
export interface WindowPage {
  readonly bucket: string;
  readonly shard: number;
  /** Summaries only: the index carries no payload. */
  readonly records: readonly RecordSummary[];
}

/** The reconciler's view of the events table. It reads windows with Query, never Scan. */
export interface ReconcilerStore extends ParkedRecords {
  /** Every record received in [fromMs, toMs), page by page, bucket by bucket, shard by shard. */
  readWindow(fromMs: number, toMs: number): AsyncIterable<WindowPage>;
  /** One record, for an entry whose record lies outside the window. */
  getRecord(route: string, key: string): Promise<EventRecord | undefined>;
  /**
   * True for the one caller that may re-send a stuck record's message (or a FAILED record's
   * lost dead-letter copy) now: two reconcilers racing send once.
   */
  claimResend(route: string, key: string, request: ResendRequest): Promise<boolean>;
  appendLog(entry: ExecutionLogEntry): Promise<void>;
  /** Records a run could not re-send, whatever their age (the sparse retry partition). */
  listStranded(route: string): AsyncIterable<readonly EventRecord[]>;
  /** Remembers a record whose re-send failed, so later runs find it outside the window too. */
  markStranded(ref: RecordRef): Promise<void>;
  /** Forgets it once its message went out. */
  clearStranded(ref: RecordRef): Promise<void>;
}
