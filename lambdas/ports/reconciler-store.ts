import type { EventRecord, RecordSummary } from '../domain/event-record.ts';
import type { ResendRequest } from './event-store.ts';
import type { ExecutionLogEntry, RecordRef } from './execution-store.ts';
import type { ParkedRecords } from './parked-records.ts';

/**
 * Where a window read starts: an hour bucket and shard of the byTime index, and within it just
 * after the record `after` (its index keys are the Query's ExclusiveStartKey), or at its start.
 */
export interface WindowStart {
  readonly bucket: string;
  readonly shard: number;
  readonly after?: RecordRef;
}

/** One Query's worth of a window: the hour bucket and shard it came from. */
export interface WindowPage {
  readonly bucket: string;
  readonly shard: number;
  /** Summaries only (the index carries no payload), in the index's order. */
  readonly records: readonly RecordSummary[];
  /** Where the read goes on after this page; undefined after the window's last page. */
  readonly next: WindowStart | undefined;
}

/**
 * Where a reconciliation of one window stands, phase by phase (reconciler/reconcile.ts runs them in order): the next run of
 * the window starts here. `after` is the last record handled, the key the next read starts after.
 */
export type ReconcilePosition =
  | { readonly phase: 'parked' | 'stranded'; readonly route: string; readonly after?: RecordRef }
  | { readonly phase: 'window'; readonly bucket: string; readonly shard: number; readonly after?: RecordRef }
  /** The effects check starts over when a run stops inside it (reconciler/phase-effects.ts says why). */
  | { readonly phase: 'effects' }
  | { readonly phase: 'done' };

/**
 * What the effects check keeps of the records one run read in the window phase (reconciler/window-keys.ts,
 * the header): a 52-bit hash per record, and for each route with a ledger a hash and a Query
 * partition per completed record.
 */
export interface WindowKeysPart {
  readonly records: Float64Array;
  readonly completed: ReadonlyMap<string, { readonly hashes: Float64Array; readonly parts: Uint32Array }>;
}

/**
 * The reconciler's cursor: the window its scheduled runs are reconciling, and where the last
 * run stopped. One item in the events table (reconcile-cursor.ts says how runs share it).
 */
export interface CursorState {
  readonly fromMs: number;
  readonly toMs: number;
  readonly position: ReconcilePosition;
  /** Runs that worked on this window so far. */
  readonly runs: number;
  /** This window's id, which names its key chunks. */
  readonly windowId: string;
  /** The hash seed of this window, the same for each of its runs. */
  readonly seed: number;
  /** The key chunks the runs that stopped inside the window saved (saveKeys). */
  readonly keyChunks: readonly string[];
  /** A run died inside the window phase, so its part of the keys is gone: the effects check reads the window again. */
  readonly keysLost: boolean;
  /** Runs that began at the effects check and ran out of budget inside it again. */
  readonly effectsTries: number;
  /** Where the sweep of expired items stands (expiry-sweep.ts); undefined before its first run. */
  readonly sweep?: SweepPosition;
  /** What the last run that worked on a window found, written with its release (the console's overview). */
  readonly lastRun?: LastRunReport;
}

/** One run's report as its cursor keeps it: when it ran, and its counts (re-enqueued, reversed, missing...). */
export interface LastRunReport {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly counts: Readonly<Record<string, number>>;
  /** It ran out of budget inside the window: the next run goes on from where it stopped. */
  readonly stoppedEarly: boolean;
}

/** An item of the events table that carries an expiry: its table key and `expiresAt` (epoch seconds). */
export interface ExpiringItem {
  readonly pk: string;
  readonly sk: string;
  readonly expiresAt: number;
}

/** A record's byTime index copy, as the sweep reads it: `gsi1sk` is where a read continues after it. */
export interface IndexedRecord extends ExpiringItem {
  readonly gsi1sk: string;
}

/**
 * Where the sweep of expired items stands between runs (expiry-sweep.ts): the hour buckets of
 * the byTime index visited so far, those that still hold records, and a visit in progress.
 */
export interface SweepPosition {
  /** The start (epoch ms) of the oldest hour bucket never visited: every bucket before it has been, once at least. */
  readonly nextHourMs: number;
  /**
   * Visited buckets that still held records, by their hour's start (epoch ms, as a string): the
   * earliest expiry (epoch seconds) among what was left. A bucket is visited again once that passed.
   */
  readonly pending: Readonly<Record<string, number>>;
  /** A bucket visit a run stopped in: its hour, shard, the last index copy handled, and the earliest expiry left so far (-1: none). */
  readonly at?: { readonly hourMs: number; readonly shard: number; readonly after?: IndexedRecord; readonly earliest: number };
}

/** One page of an hour bucket's shard of the byTime index. */
export interface BucketPage {
  readonly records: readonly IndexedRecord[];
  /** More pages follow. */
  readonly more: boolean;
}

/**
 * The sweep's view of the events table (expiry-sweep.ts): reads through the byTime index and
 * partition Queries, and conditional deletes, one item each (no transactions: MRSC refuses them).
 */
export interface ExpirySweepStore {
  /** One hour bucket's shard (gsi1pk = T#<bucket>#<shard>), page by page, from just after `after`. */
  readBucket(bucket: string, shard: number, after?: IndexedRecord): AsyncIterable<BucketPage>;
  /** Every item of a partition that carries an expiry (a record and its log items), read strongly consistent. */
  readPartition(pk: string): Promise<ExpiringItem[]>;
  /** The reconciler's key chunks (pk RECONCILER, sk KEYS#...), their expiry only. */
  readKeyChunks(): Promise<ExpiringItem[]>;
  /**
   * Deletes the item if its expiry still is `item.expiresAt`, and before `cutoffSeconds`:
   * 'kept' when it was renewed, re-claimed or is not yet due, 'gone' when nothing was there.
   */
  deleteExpired(item: ExpiringItem, cutoffSeconds: number): Promise<'deleted' | 'kept' | 'gone'>;
}

/** The cursor as a run finds it when it takes it. */
export type CursorTake =
  /** `tookOver`: from a run whose lease had ended (it died, or ran past its lease). */
  | { readonly taken: true; readonly cursor: CursorState | undefined; readonly tookOver: boolean }
  /** Another run holds it, until `leaseUntil` (epoch ms, by that run's clock). */
  | { readonly taken: false; readonly holder: string; readonly leaseUntil: number };

/** The reconciler's view of the events table. It reads windows with Query, never Scan. */
export interface ReconcilerStore extends ParkedRecords {
  /**
   * Every record received in [fromMs, toMs), page by page, bucket by bucket, shard by shard,
   * from `start` on (@default the window's first bucket and shard).
   */
  readWindow(fromMs: number, toMs: number, start?: WindowStart): AsyncIterable<WindowPage>;
  /** One record, for an entry whose record lies outside the window. */
  getRecord(route: string, key: string): Promise<EventRecord | undefined>;
  /** Some records at once (BatchGetItem), each found once; the absent ones are left out. */
  getRecords(refs: readonly { readonly route: string; readonly key: string }[]): Promise<EventRecord[]>;
  /**
   * True for the one caller that may re-send a stuck record's message (or a FAILED record's
   * lost dead-letter copy) now: two reconcilers racing send once.
   */
  claimResend(route: string, key: string, request: ResendRequest): Promise<boolean>;
  appendLog(entry: ExecutionLogEntry): Promise<void>;
  /** A route's PARKED records page by page, from just after `after` (@default the start). */
  listParked(route: string, after?: RecordRef): AsyncIterable<readonly EventRecord[]>;
  /** Records a run could not re-send, whatever their age (the sparse retry partition), from just after `after`. */
  listStranded(route: string, after?: RecordRef): AsyncIterable<readonly EventRecord[]>;
  /** Remembers a record whose re-send failed, so later runs find it outside the window too. */
  markStranded(ref: RecordRef): Promise<void>;
  /** Forgets it once its message went out. */
  clearStranded(ref: RecordRef): Promise<void>;
  /**
   * Takes the cursor for run `runId` until `leaseUntil` (epoch ms): when nobody holds it, its
   * holder's lease ended before `staleBefore`, or `runId` holds it already.
   */
  takeCursor(runId: string, leaseUntil: number, staleBefore: number): Promise<CursorTake>;
  /** Saves where run `runId` stands and extends its lease; false when the run no longer holds the cursor. */
  saveCursor(runId: string, cursor: CursorState, leaseUntil: number): Promise<boolean>;
  /** Saves the cursor one last time and lets it go; false when the run no longer held it. */
  releaseCursor(runId: string, cursor: CursorState): Promise<boolean>;
  /**
   * Saves one run's part of a window's keys as chunk items (expiring at `expiresAt`, epoch
   * seconds) and returns their names, for the cursor to list.
   */
  saveKeys(windowId: string, runId: string, part: WindowKeysPart, expiresAt: number): Promise<string[]>;
  /** The key chunks named, one part each. */
  readKeys(chunks: readonly string[]): AsyncIterable<WindowKeysPart>;
}
