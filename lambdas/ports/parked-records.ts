import type { EventRecord } from '../domain/event-record.ts';
import type { RecordRef } from './execution-store.ts';

/** A route's parked work, found through the sparse `parked` index whatever its age. */
export interface ParkedRecords {
  /** Every PARKED record of a route, page by page (Query, never Scan). */
  listParked(route: string): AsyncIterable<readonly EventRecord[]>;
  /** PARKED -> RECEIVED; call it after the record's message was sent. False: not parked any more. */
  unpark(ref: RecordRef, nowMs: number): Promise<boolean>;
  /** Moves a parked record's expiry to a whole TTL from now when it would end before `beforeSeconds`. */
  keepParked(ref: RecordRef, nowMs: number, ttlSeconds: number, beforeSeconds: number): Promise<boolean>;
}
