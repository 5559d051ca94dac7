/**
 * The reconciler's own items in the events table (pk RECONCILER), as DynamoDB stores them: the
 * cursor's attributes, and the key chunks' hashes as Binary values (dynamodb-reconciler-store.ts
 * reads and writes them).
 */
import type { CursorState, LastRunReport, SweepPosition } from '../ports/reconciler-store.ts';
import { newWriteId } from './conditional-write.ts';

/** The cursor as stored, or undefined for an item that has never held one. */
export function cursorOf(item: Record<string, unknown> | undefined): CursorState | undefined {
  if (item === undefined || typeof item.fromMs !== 'number' || typeof item.toMs !== 'number' || typeof item.position !== 'object') return undefined;
  const num = (name: string): number => (typeof item[name] === 'number' ? item[name] : 0);
  return {
    fromMs: item.fromMs,
    toMs: item.toMs,
    position: item.position as CursorState['position'],
    runs: num('runs'),
    windowId: typeof item.windowId === 'string' ? item.windowId : '',
    seed: num('seed'),
    keyChunks: Array.isArray(item.keyChunks) ? (item.keyChunks as string[]) : [],
    keysLost: item.keysLost === true,
    effectsTries: num('effectsTries'),
    ...(typeof item.sweep === 'object' && item.sweep !== null ? { sweep: item.sweep as SweepPosition } : {}),
    ...(typeof item.lastRun === 'object' && item.lastRun !== null ? { lastRun: item.lastRun as LastRunReport } : {}),
  };
}

/** The attributes of a cursor, as SET clauses and their values. */
export function cursorUpdate(cursor: CursorState): { set: string; values: Record<string, unknown> } {
  return {
    set:
      'fromMs = :from, toMs = :to, #position = :position, runs = :runs, windowId = :windowId, seed = :seed, ' +
      'keyChunks = :keyChunks, keysLost = :keysLost, effectsTries = :effectsTries, writeId = :writeId' +
      (cursor.sweep === undefined ? '' : ', sweep = :sweep') +
      (cursor.lastRun === undefined ? '' : ', lastRun = :lastRun'),
    values: {
      ':from': cursor.fromMs,
      ':to': cursor.toMs,
      ':position': cursor.position,
      ':runs': cursor.runs,
      ':windowId': cursor.windowId,
      ':seed': cursor.seed,
      ':keyChunks': [...cursor.keyChunks],
      ':keysLost': cursor.keysLost,
      ':effectsTries': cursor.effectsTries,
      ':writeId': newWriteId(),
      ...(cursor.sweep === undefined ? {} : { ':sweep': cursor.sweep }),
      ...(cursor.lastRun === undefined ? {} : { ':lastRun': cursor.lastRun }),
    },
  };
}

/** Hashes a key chunk holds at most: 25,000 x 12 bytes is 300 KB, under DynamoDB's 400 KB item. */
export const CHUNK_HASHES = 25_000;

/** A typed array's bytes, as DynamoDB's Binary type carries them. */
export function bytesOf(values: Float64Array | Uint32Array): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}

/** A copy into fresh, aligned memory: the SDK's Binary values may start at any byte offset. */
export function float64sOf(bytes: unknown): Float64Array {
  const copy = bytes instanceof Uint8Array ? bytes.slice() : new Uint8Array();
  return new Float64Array(copy.buffer, 0, copy.byteLength / 8);
}

/** A copy into fresh, aligned memory, as float64sOf. */
export function uint32sOf(bytes: unknown): Uint32Array {
  const copy = bytes instanceof Uint8Array ? bytes.slice() : new Uint8Array();
  return new Uint32Array(copy.buffer, 0, copy.byteLength / 4);
}
