/**
 * The sweep of expired items, for a table with no TTL: a deployment of several Regions keeps an
 * MRSC global table, which cannot have TTL, so the scheduled reconciler sweeps with what is left
 * of its budget. why: docs/architecture.md#the-sweep-of-expired-items
 *
 * Each item goes by its own `expiresAt`, as TTL would, once passed by twice the clock bound (the
 * write conditions compare it by other machines' clocks). A record's log items go before the
 * record, so a run that dies in between leaves the record, and its partition is read again: a log
 * item never outlives its record unseen. A bucket is visited once the shortest TTL has passed for
 * all of it (`nextHourMs`), and again at the earliest expiry it still held (`pending`), since
 * every wait on a queue or a person renews a record (record-transitions.ts, keepUntilSeconds;
 * phase-parked.ts, keepParked).
 *
 * Bounded and resumable like the phases: a visit stops between two records when the budget ends
 * and saves where (`at`) on the cursor. Every delete is conditional
 * (store/dynamodb-expiry-sweep-store.ts), so a run that dies hands its last records to the next,
 * whose deletes find them gone, and a record renewed or re-claimed meanwhile is kept.
 */
import { takeoverMarginMs } from '../config/route-config.ts';
import { hourBucket } from '../domain/event-record.ts';
import type { ExpirySweepStore, ExpiringItem, IndexedRecord, SweepPosition } from '../ports/reconciler-store.ts';

const HOUR_MS = 3_600_000;
const TIME_SHARDS = 8;
/** The record item's sort key (store/record-keys.ts, RECORD_SK): deleted after its partition's other items. */
const RECORD_SK = 'RECORD';

/**
 * Where a first sweep starts: no MRSC table holds a record from before December 2024, when
 * MRSC was announced (in preview; generally available since June 2025: AWS Prescriptive
 * Guidance, "DynamoDB global tables", overview), and an MRSC table is created empty.
 */
export const SWEEP_EPOCH_MS = Date.UTC(2024, 11, 1);
/** Records handled at once: their partition reads and deletes overlap (bench/sweep.ts measures it). */
export const SWEEP_CONCURRENCY = 16;

export interface SweepOptions {
  /** The shortest TTL of the deployment's routes, in seconds. */
  readonly minTtlSeconds: number;
  /** The deployment's clock bound (ResolvedConfig.clockSkewSeconds). */
  readonly clockSkewSeconds: number;
  /** Where a sweep with no position starts. @default SWEEP_EPOCH_MS */
  readonly sinceMs?: number;
  /** @default SWEEP_CONCURRENCY */
  readonly concurrency?: number;
}

/** What one run's sweep did. */
export interface SweepReport {
  /** Items deleted: records, their log items, key chunks. */
  swept: number;
  /** Of those, records. */
  records: number;
  /** Items found expired by the index or the partition read, and refused at the delete: renewed or re-claimed meanwhile. */
  kept: number;
  /** Bucket visits finished. */
  buckets: number;
  /** True when nothing was left to visit in this run: the sweep is up to date. */
  caughtUp: boolean;
}

export interface SweepControl {
  readonly now: () => number;
  readonly overBudget: () => boolean;
  /** Told the position after every page; false stops the sweep (the cursor was lost). */
  readonly checkpoint: (position: SweepPosition) => Promise<boolean>;
  readonly onProgress?: (done: { pages: number; records: number }) => void;
}

type Visit = NonNullable<SweepPosition['at']>;

/** Sweeps from `position` until the budget ends or nothing is due; returns where it stands. */
export async function sweepExpired(
  store: ExpirySweepStore,
  position: SweepPosition | undefined,
  options: SweepOptions,
  control: SweepControl,
): Promise<{ position: SweepPosition; report: SweepReport }> {
  const nowMs = control.now();
  const marginMs = takeoverMarginMs(options.clockSkewSeconds);
  const cutoff = Math.floor((nowMs - marginMs) / 1000);
  // The newest bucket every record of which is past the shortest TTL, by the margin.
  const horizonMs = Math.floor((nowMs - marginMs - options.minTtlSeconds * 1000 - HOUR_MS) / HOUR_MS) * HOUR_MS;
  const sweep = new Sweep(store, control, cutoff, options.concurrency ?? SWEEP_CONCURRENCY);
  const { report } = sweep;

  // The key chunks first: a handful of items, never renewed.
  for (const chunk of await store.readKeyChunks()) if (chunk.expiresAt < cutoff && !control.overBudget()) await sweep.remove(chunk);

  let pos: SweepPosition = position ?? { nextHourMs: Math.floor((options.sinceMs ?? SWEEP_EPOCH_MS) / HOUR_MS) * HOUR_MS, pending: {} };
  for (let visit = nextVisit(pos, cutoff, horizonMs); visit !== undefined; visit = nextVisit(pos, cutoff, horizonMs)) {
    const { at, stopped } = await sweep.visit(pos, visit);
    if (stopped) return { position: { ...pos, at }, report };
    // The bucket is done: forgotten when empty, else remembered with its earliest expiry.
    const { [String(at.hourMs)]: _visited, ...pending } = pos.pending;
    pos = {
      nextHourMs: at.hourMs >= pos.nextHourMs ? at.hourMs + HOUR_MS : pos.nextHourMs,
      pending: at.earliest < 0 ? pending : { ...pending, [String(at.hourMs)]: at.earliest },
    };
    report.buckets++;
    if (control.overBudget()) return { position: pos, report };
  }
  report.caughtUp = true;
  return { position: pos, report };
}

/** The visit to go on with, else the earliest remembered bucket now due, else the next never visited up to the horizon. */
function nextVisit(pos: SweepPosition, cutoff: number, horizonMs: number): Visit | undefined {
  if (pos.at !== undefined) return pos.at;
  const due = Object.entries(pos.pending)
    .filter(([, earliest]) => earliest < cutoff)
    .map(([hour]) => Number(hour))
    .sort((a, b) => a - b)[0];
  if (due !== undefined) return { hourMs: due, shard: 0, earliest: -1 };
  return pos.nextHourMs <= horizonMs ? { hourMs: pos.nextHourMs, shard: 0, earliest: -1 } : undefined;
}

/** One run's sweep: its deletes, counted in its report. */
class Sweep {
  readonly report: SweepReport = { swept: 0, records: 0, kept: 0, buckets: 0, caughtUp: false };
  readonly #store: ExpirySweepStore;
  readonly #control: SweepControl;
  readonly #cutoff: number;
  readonly #concurrency: number;
  #pages = 0;
  #indexed = 0;

  constructor(store: ExpirySweepStore, control: SweepControl, cutoff: number, concurrency: number) {
    this.#store = store;
    this.#control = control;
    this.#cutoff = cutoff;
    this.#concurrency = concurrency;
  }

  /** False when the delete was refused: the item was renewed or re-claimed meanwhile. */
  async remove(item: ExpiringItem): Promise<boolean> {
    const outcome = await this.#store.deleteExpired(item, this.#cutoff);
    if (outcome === 'deleted') {
      this.report.swept++;
      if (item.sk === RECORD_SK) this.report.records++;
    }
    if (outcome === 'kept') this.report.kept++;
    return outcome !== 'kept';
  }

  /** Visits a bucket's shards from `visit`; where it stands, and whether it stopped (budget, or the cursor lost) before the end. */
  async visit(pos: SweepPosition, visit: Visit): Promise<{ at: Visit; stopped: boolean }> {
    const bucket = hourBucket(visit.hourMs);
    let at = visit;
    for (let shard = visit.shard; shard < TIME_SHARDS; shard++) {
      if (shard !== at.shard) at = { hourMs: at.hourMs, shard, earliest: at.earliest };
      // Before each Query too: a first sweep walks months of empty buckets.
      if (this.#control.overBudget()) return { at, stopped: true };
      for await (const page of this.#store.readBucket(bucket, shard, shard === visit.shard ? visit.after : undefined)) {
        this.#pages++;
        const done = await this.#page(page.records, at);
        at = done.at;
        this.#control.onProgress?.({ pages: this.#pages, records: this.#indexed });
        if (done.stopped) return { at, stopped: true };
        if (!(await this.#control.checkpoint({ ...pos, at }))) return { at, stopped: true };
      }
    }
    return { at, stopped: false };
  }

  /** A page's records, `concurrency` at a time, until the budget ends. */
  async #page(records: readonly IndexedRecord[], from: Visit): Promise<{ at: Visit; stopped: boolean }> {
    let at = from;
    for (let i = 0; i < records.length; i += this.#concurrency) {
      if (this.#control.overBudget()) return { at, stopped: true };
      const part = records.slice(i, i + this.#concurrency);
      const left = await Promise.all(part.map((copy) => this.#handle(copy)));
      this.#indexed += part.length;
      const earliest = left.reduce((min, e) => (e < 0 ? min : min < 0 ? e : Math.min(min, e)), at.earliest);
      at = { hourMs: at.hourMs, shard: at.shard, after: part[part.length - 1], earliest };
    }
    return { at, stopped: false };
  }

  /** The earliest expiry the record leaves in its bucket (-1: none), once its expired items are deleted. */
  async #handle(copy: IndexedRecord): Promise<number> {
    const cutoff = this.#cutoff;
    if (copy.expiresAt >= cutoff) return copy.expiresAt;
    const items = await this.#store.readPartition(copy.pk);
    const record = items.find((i) => i.sk === RECORD_SK);
    for (const item of items) if (item.sk !== RECORD_SK && item.expiresAt < cutoff) await this.remove(item);
    if (record === undefined) return -1;
    if (record.expiresAt >= cutoff) return record.expiresAt;
    // Refused: it lives on (renewed) or is another generation; the bucket is looked at again next run.
    return (await this.remove(record)) ? -1 : cutoff;
  }
}
