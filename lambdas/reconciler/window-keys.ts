/**
 * What the effects check keeps of a window, from the window phase to the effects phase and
 * from run to run of one window: hashes in typed arrays, never an object per record.
 * why: docs/architecture.md#a-day-of-traffic-is-large
 */
import { randomInt } from 'node:crypto';
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { RECORD_STATUS, hourBucket } from '../domain/event-record.ts';
import type { RecordSummary } from '../domain/event-record.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { WindowKeysPart } from '../ports/reconciler-store.ts';
import { KeyHashes, hash52 } from './key-hashes.ts';
import type { ReconcileOptions } from './reconcile-types.ts';

const HOUR_MS = 3_600_000;
/** A Query partition of the window (hour bucket, shard) as one number: bucket index x PART_SHARDS + shard. */
export const PART_SHARDS = 65_536;

/** A key of a route, unique across routes. */
export function scopedKey(route: string, key: string): string {
  return `${route}\u0000${key}`;
}

/** The hour buckets a window touches, oldest first (as the store reads them). */
function bucketsOf(fromMs: number, toMs: number): string[] {
  const buckets: string[] = [];
  for (let hour = Math.floor(fromMs / HOUR_MS) * HOUR_MS; hour < toMs; hour += HOUR_MS) buckets.push(hourBucket(hour));
  return buckets;
}

/** The completed records of one route: a hash and a Query partition each, appended in reading order. */
export class CompletedKeys {
  #hashes = new Float64Array(1024);
  #parts = new Uint32Array(1024);
  #size = 0;

  add(hash: number, part: number): void {
    if (this.#size === this.#hashes.length) {
      const hashes = new Float64Array(this.#size * 2);
      hashes.set(this.#hashes);
      const parts = new Uint32Array(this.#size * 2);
      parts.set(this.#parts);
      this.#hashes = hashes;
      this.#parts = parts;
    }
    this.#hashes[this.#size] = hash;
    this.#parts[this.#size++] = part;
  }

  absorb(hashes: Float64Array, parts: Uint32Array): void {
    for (let i = 0; i < hashes.length; i++) this.add(hashes[i] as number, parts[i] as number);
  }

  export(): { hashes: Float64Array; parts: Uint32Array } {
    return { hashes: this.#hashes.slice(0, this.#size), parts: this.#parts.slice(0, this.#size) };
  }

  get size(): number {
    return this.#size;
  }

  /** The ones with no entry in `entries`: their hashes, and the partitions to read to name them. */
  missingFrom(entries: KeyHashes): { hashes: KeyHashes; parts: number[] } {
    const hashes = new KeyHashes();
    const parts = new Set<number>();
    for (let i = 0; i < this.#size; i++) {
      const h = this.#hashes[i] as number;
      if (entries.has(h)) continue;
      hashes.add(h);
      parts.add(this.#parts[i] as number);
    }
    return { hashes: hashes.seal(), parts: [...parts].sort((a, b) => a - b) };
  }
}

/** The window's keys as one run holds them, and the ledgers they are checked against. */
export class WindowKeys {
  /** The hash seed of the window, the same in each of its runs when carried. */
  readonly seed: number;
  readonly buckets: readonly string[];
  /** The routes of each ledger: the effects check reads each ledger once for all of them. */
  readonly routesByLedger = new Map<Ledger, Set<string>>();
  readonly checksEffects: boolean;
  /** Every record's key read in the window. */
  inWindow = new KeyHashes();
  /** This run holds keys of its own, read in the window phase and not yet saved. */
  ownPart = false;
  /** This run read the window from its start, so its keys are all of the window's. */
  windowRemembered = false;
  readonly #bucketIndex: ReadonlyMap<string, number>;
  readonly #ledgerOfRoute = new Map<string, Ledger>();
  #completed = new Map<string, CompletedKeys>();

  constructor(routes: readonly ResolvedRoute[], ledgers: ReadonlyMap<string, Ledger> | undefined, options: Pick<ReconcileOptions, 'fromMs' | 'toMs' | 'keys'>) {
    this.seed = options.keys?.seed ?? randomInt(0x7fffffff);
    this.buckets = bucketsOf(options.fromMs, options.toMs);
    this.#bucketIndex = new Map(this.buckets.map((b, i) => [b, i]));
    for (const route of routes) {
      const ledger = ledgers?.get(route.action);
      if (ledger === undefined) continue;
      this.#ledgerOfRoute.set(route.name, ledger);
      this.routesByLedger.set(ledger, (this.routesByLedger.get(ledger) ?? new Set()).add(route.name));
    }
    this.checksEffects = this.routesByLedger.size > 0;
  }

  hashOf(route: string, key: string): number {
    return hash52(scopedKey(route, key), this.seed);
  }

  /** The completed records of a route read so far, if any. */
  completedIn(route: string): CompletedKeys | undefined {
    return this.#completed.get(route);
  }

  remember(record: RecordSummary, bucket: string, shard: number): void {
    const h = this.hashOf(record.route, record.key);
    this.inWindow.add(h);
    if (!this.#ledgerOfRoute.has(record.route) || record.status !== RECORD_STATUS.completed) return;
    this.#completedOf(record.route).add(h, (this.#bucketIndex.get(bucket) ?? 0) * PART_SHARDS + shard);
  }

  /** Adds a part an earlier run of the window saved. */
  absorb(part: WindowKeysPart): void {
    this.inWindow.addAll(part.records);
    for (const [route, done] of part.completed) this.#completedOf(route).absorb(done.hashes, done.parts);
  }

  /** Drops every key held: the window is about to be read again from its start. */
  forget(): void {
    this.inWindow = new KeyHashes();
    this.#completed = new Map();
    this.ownPart = false;
  }

  exportPart(): WindowKeysPart {
    return {
      records: this.inWindow.values(),
      completed: new Map([...this.#completed].map(([route, keys]) => [route, keys.export()])),
    };
  }

  #completedOf(route: string): CompletedKeys {
    let keys = this.#completed.get(route);
    if (keys === undefined) this.#completed.set(route, (keys = new CompletedKeys()));
    return keys;
  }
}
