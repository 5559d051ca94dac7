/**
 * Layer 3: reconcile a window. Re-enqueue stuck work, compare accepted work with the
 * ledger, reverse duplicate effects, and report everything a person must look at. Safe to
 * run twice or twice at once: every write is conditional and each reversal id is derived
 * from the entry it reverses.
 *
 * A window is a full day of traffic, at any rate: a million records and more. A run
 * therefore streams it, page by page, and keeps no object per record across pages.
 *
 * The phases, in order. A run may start at any of them, and stops at a clean position
 * between two records when its time budget runs out:
 *   parked    every PARKED record of each route, whatever its age (the sparse index): re-sent on
 *             an active route, kept from expiring on a paused one
 *   stranded  records an earlier run could not re-send (the retry partition), whatever their age
 *   window    every record received in [fromMs, toMs): failed ones reported, stuck ones
 *             re-enqueued (one resend per window, claimResend decides)
 *   effects   each ledger against the window: duplicate entries reversed, orphan entries and
 *             missing effects reported
 *
 * The position (ReconcilePosition) names the phase, the route or the hour bucket and shard,
 * and the last record handled there, whose index keys are the next Query's ExclusiveStartKey.
 * `checkpoint` is told the position after every page; a run that ends on its budget returns
 * it as `stoppedAt`. The next run given it as `start` begins right after that record, so a
 * window too large for one run is finished by the next ones with no record skipped and none
 * handled twice (reconcile-cursor.ts keeps it between scheduled runs). A run that dies
 * between two checkpoints hands its last page to the next run again: that page's conditional
 * writes (claimResend above all) refuse the second attempt, so a stuck record is still sent
 * once.
 *
 * The effects check needs the whole window at once, and keeps it as hashes:
 *  - the window's keys, a 52-bit hash each in a sorted Float64Array (key-hashes.ts): 8 bytes
 *    a record, 8 MB at a million, where the Map of summaries this replaced took about 330 B
 *    of heap a record (measured by `npm run bench:reconcile`), 330 MB at a million;
 *  - the ledger's keys in the window, the same way (all entries, and posted ones apart);
 *  - each completed record of a ledger's routes as a hash and the Query partition it came
 *    from (8 + 4 bytes): a missing effect is named by reading that partition again;
 *  - objects only for what is rare: keys outside the window (received before it, or still
 *    settling after it, or orphans), and the few keys with two posted entries, whose entries
 *    a second read of the ledger collects.
 * At a million records and a million entries that is under 50 MB, held while the phase runs
 * (typed arrays grow by doubling). The earliest receipt behind the lookback is a running
 * minimum, never Math.min over a spread array (Node 24 throws RangeError from about 126,000
 * arguments, measured by the bench).
 * The window's keys go from run to run of one window (`keys`: a run that stops inside the
 * window, or inside the effects check, saves its part as chunk items, reconcile-cursor.ts), so
 * the run that checks the effects does not read the window again. The ledger passes are not
 * carried: the effects check starts its ledger passes over when a run stops inside it.
 * Reversals are idempotent (already-reversed counts nothing), and the check's findings are
 * reported only by the run that finishes it, so nothing is reported twice. The next run starts
 * at this phase, with its whole budget for it. The ledger of a window must therefore be read
 * within one run (twice, when it holds duplicates): what `npm run bench:reconcile` measures.
 *
 * Among a key's posted entries the one kept is the entry posted by the run that completed the
 * record (`attempt` = its `runs`, protocol v3 decision 3), else the earliest (postedAt, then
 * entryId, so every reconciler keeps the same one). A group whose record is still in flight
 * (RECEIVED, EXECUTING, PARKED) is left for a later run: the run that will complete it may be
 * the one whose entry must stay.
 */
import type { EntityOrder } from '../ports/entity-order.ts';
import type { BodyObjects } from '../ports/body-objects.ts';
import { createHash, randomInt } from 'node:crypto';
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { CLOCK_SKEW_SECONDS, DEAD_LETTER_SEND_SECONDS, takeoverMarginMs } from '../config/route-config.ts';
import { RECORD_STATUS, acceptedAnswer, hourBucket, keptPayloadOf, workMessageOf } from '../domain/event-record.ts';
import type { EventRecord, RecordSummary, WorkMessage } from '../domain/event-record.ts';
import { operationFingerprint } from '../domain/operation-fingerprint.ts';
import { LAST_ERROR_MAX_CHARS, cut } from '../domain/queue-limits.ts';
import { LEDGER_STATUS, ledgerPages } from '../ledger/ledger.ts';
import type { Ledger, LedgerEntry } from '../ledger/ledger.ts';
import type { ResendRequest } from '../ports/event-store.ts';
import type { RecordRef } from '../ports/execution-store.ts';
import type { ReconcilePosition, ReconcilerStore, WindowKeysPart, WindowStart } from '../ports/reconciler-store.ts';
import type { RouteStateStore } from '../ports/route-state-store.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import type { SweepReport } from './expiry-sweep.ts';
import { KeyHashes, hash52 } from './key-hashes.ts';

export type { ReconcilePosition } from '../ports/reconciler-store.ts';

export interface ReconcileDeps {
  readonly store: ReconcilerStore;
  readonly queue: WorkQueue;
  readonly routes: ReadonlyMap<string, ResolvedRoute>;
  /**
   * The ledger of each action that declares one, by action name: the routes running that
   * action get the effects check against it. Actions may share a ledger. @default - none
   */
  readonly ledgers?: ReadonlyMap<string, Ledger>;
  readonly now: () => number;
  /** Route states: parked work on an active route is re-enqueued. @default - parked work is only reported */
  readonly routeState?: RouteStateStore;
  /** The deployment's clock bound (ResolvedConfig.clockSkewSeconds), in seconds. @default CLOCK_SKEW_SECONDS */
  readonly clockSkewSeconds?: number;
  /**
   * The bucket of large bodies: a parked record kept a whole TTL more gets its body object renewed
   * first. @default - none (a deployment without the bucket has no body objects)
   */
  readonly bodies?: BodyObjects;
  /**
   * The lines of routes ordered per entity: a record parked waiting for its turn is re-sent only
   * once its turn has come (its wake-up was lost to a crash), else kept, with its place.
   * @default - none: waiting records are re-sent as any parked work on an active route
   */
  readonly order?: EntityOrder;
}

export interface ReconcileOptions {
  readonly fromMs: number;
  readonly toMs: number;
  /** A run stops cleanly once this much time is spent, and says where. */
  readonly budgetMs: number;
  /** RECEIVED work not sent for this long is re-enqueued. */
  readonly stuckAfterMs: number;
  readonly maxReenqueue: number;
  /** Progress, for long runs started by hand. */
  readonly onProgress?: (done: { pages: number; records: number }) => void;
  /** Where an earlier run of this window stopped (its report's stoppedAt). @default - the start: parked work first */
  readonly start?: ReconcilePosition;
  /**
   * Told the position after every page: where a run that died now would be continued from.
   * False stops the run at once (another run took the window over). @default - nothing is kept
   */
  readonly checkpoint?: (position: ReconcilePosition) => Promise<boolean>;
  /** What the effects check keeps of the window between the runs of one window. @default - nothing: a resumed run reads the window again */
  readonly keys?: KeysCarry;
}

/** The window's keys, carried from run to run of one window (reconcile-cursor.ts keeps them). */
export interface KeysCarry {
  /** The hash seed of the window, the same in each of its runs. */
  readonly seed: number;
  /** The parts the earlier runs of this window saved; undefined when one was lost (a run died inside the window phase). */
  readonly earlier: (() => AsyncIterable<WindowKeysPart>) | undefined;
  /** Keeps this run's part for the next runs: called when the run stops inside the window or the effects phase. */
  readonly save: (part: WindowKeysPart) => Promise<void>;
}

export type Finding =
  | 'failed'
  | 'parked'
  /** Parked waiting for its turn in its entity's line behind a FAILED head: a person redrives or skips the head (docs/ordering.md). */
  | 'line-blocked'
  | 'missing-effect'
  | 'orphan-entry'
  /** FAILED with two posted entries or more: reversed once a redrive completes it; a person who drops it keeps the entry whose effect happened. */
  | 'failed-with-entries'
  | 'reenqueue-limit'
  | 'reenqueue-failed'
  /** Stuck, and the record keeps no payload to send again: see messageFor. */
  | 'payload-not-kept'
  | 'duplicate-reversed'
  /** The effects check of a window did not fit in a run's budget, three runs in a row: it was given up (reconcile-cursor.ts). */
  | 'effects-unchecked';

export interface ReconcileReport {
  readonly runId: string;
  readonly window: { readonly fromMs: number; readonly toMs: number; readonly from: string; readonly to: string };
  readonly startedAt: number;
  readonly durationMs: number;
  readonly counts: {
    scanned: number;
    reenqueued: number;
    reversed: number;
    missing: number;
    orphans: number;
    failed: number;
    parked: number;
    needsAttention: number;
  };
  /** The first REPORT_LIST_LIMIT findings; counts.needsAttention counts them all. */
  readonly needsAttention: { route: string; key: string; finding: Finding; detail?: string }[];
  /** The first REPORT_LIST_LIMIT reversals; counts.reversed counts them all. */
  readonly reversals: { route: string; key: string; entryId: string; keptEntryId: string; reversalId: string }[];
  /** Findings and reversals counted but not listed, beyond the first REPORT_LIST_LIMIT of each. */
  readonly unlisted?: { readonly needsAttention: number; readonly reversals: number };
  /** Where this run started: undefined for the window's start. */
  readonly startedFrom?: ReconcilePosition;
  readonly stoppedEarly: boolean;
  /** Where a run that ran out of budget stopped: the next run of this window starts there. */
  readonly stoppedAt?: ReconcilePosition;
  /**
   * A scheduled run's cursor (reconcile-cursor.ts): the runs this window took so far, this one
   * included; whether this run continued one before it; `lost` when another run took it over.
   */
  readonly cursor?: { readonly runs: number; readonly resumed: boolean; readonly lost?: true };
  /** Another run held the window until `leaseUntil`: this run did nothing. */
  readonly skipped?: { readonly reason: 'held'; readonly holder: string; readonly leaseUntil: number };
  /**
   * Another run (another Region's, as a rule) finished a window ending at `finishedToMs`, less
   * than `minGapMs` before this run's window would end: this run did nothing (reconcile-cursor.ts,
   * "Runs that would repeat one another"). Apart from `skipped`, which says the cursor was held.
   */
  readonly notDue?: { readonly reason: 'finished-recently'; readonly finishedToMs: number; readonly minGapMs: number };
  /** What a scheduled run's sweep of expired items did (expiry-sweep.ts): only a deployment of several Regions sweeps. */
  readonly sweep?: SweepReport;
}

/**
 * Findings and reversals a report lists, each: the report is logged as one line, and a
 * CloudWatch Logs event holds at most 1 MB (CloudWatch Logs API Reference, PutLogEvents;
 * 256 KB in older documentation). A finding takes up to about 700 bytes (lastError is cut at
 * 500 characters), so 300 of them fit the older bound too.
 */
export const REPORT_LIST_LIMIT = 300;

/**
 * How far apart two functions' stamps of one instant may be: an entry's `postedAt` is the
 * executor's clock, a record's `receivedAt` the ingest's, each within CLOCK_SKEW_SECONDS of
 * true time. An entry posted seconds after the receipt may so carry an earlier stamp than it
 * (the simulation's seed 428: run 1 posted 4.4 s after the receipt, by clocks that made it
 * earlier, and was taken for an older generation's entry, so its duplicate was never reversed).
 * Twice the deployment's bound (ReconcileDeps.clockSkewSeconds).
 */
function stampSkewMsOf(deps: ReconcileDeps): number {
  return takeoverMarginMs(deps.clockSkewSeconds ?? CLOCK_SKEW_SECONDS);
}

/** The reversal id of an entry: the same for every reconciler that ever reverses it. */
export function reversalIdOf(entryId: string): string {
  return `rev_${createHash('sha256').update(`reversal\u0000${entryId}`).digest('hex').slice(0, 32)}`;
}

/** A parked record whose expiry comes within this much is given a whole TTL more. */
const PARKED_KEEP_AHEAD_SECONDS = 7 * 86_400;
const HOUR_MS = 3_600_000;
const PHASES = ['parked', 'stranded', 'window', 'effects', 'done'] as const;

function scopedKey(route: string, key: string): string {
  return `${route}\u0000${key}`;
}

function refOf(record: { route: string; key: string; receivedAt: number }): RecordRef {
  return { route: record.route, key: record.key, receivedAt: record.receivedAt };
}

/** The earliest entry first: postedAt, then entryId, so every reconciler keeps the same one. */
function byPostingOrder(a: LedgerEntry, b: LedgerEntry): number {
  return a.postedAt - b.postedAt || (a.entryId < b.entryId ? -1 : a.entryId > b.entryId ? 1 : 0);
}

/**
 * The entry of a COMPLETED key to keep (decision 3): the one the completing run posted, when it says
 * so, else the earliest. `posted` is in posting order and not empty.
 */
export function keptEntryOf(posted: readonly LedgerEntry[], record: Pick<EventRecord, 'runs'>): LedgerEntry {
  const earliest = posted[0] as LedgerEntry;
  return posted.find((e) => e.attempt === record.runs) ?? earliest;
}

/** The hour buckets a window touches, oldest first (as the store reads them). */
function bucketsOf(fromMs: number, toMs: number): string[] {
  const buckets: string[] = [];
  for (let hour = Math.floor(fromMs / HOUR_MS) * HOUR_MS; hour < toMs; hour += HOUR_MS) buckets.push(hourBucket(hour));
  return buckets;
}

/** A Query partition of the window (hour bucket, shard) as one number. */
const PART_SHARDS = 65_536;
function partOf(bucketIndex: number, shard: number): number {
  return bucketIndex * PART_SHARDS + shard;
}

/** The completed records of one route: a hash and a Query partition each, appended in reading order. */
class CompletedKeys {
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

export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions): Promise<ReconcileReport> {
  const stampSkewMs = stampSkewMsOf(deps);
  const startedAt = deps.now();
  const runId = `run_${startedAt.toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const { fromMs, toMs } = options;
  const counts = { scanned: 0, reenqueued: 0, reversed: 0, missing: 0, orphans: 0, failed: 0, parked: 0, needsAttention: 0 };
  const needsAttention: ReconcileReport['needsAttention'] = [];
  const reversals: ReconcileReport['reversals'] = [];
  const unlisted = { needsAttention: 0, reversals: 0 };
  type Flagged = ReconcileReport['needsAttention'][number];
  const listFinding = (finding: Flagged): void => {
    counts.needsAttention++;
    if (needsAttention.length < REPORT_LIST_LIMIT) needsAttention.push(finding);
    else unlisted.needsAttention++;
  };
  const flag = (record: { route: string; key: string }, finding: Finding, detail?: string): void => {
    listFinding({ route: record.route, key: record.key, finding, ...(detail === undefined ? {} : { detail }) });
  };
  const overBudget = (): boolean => deps.now() - startedAt >= options.budgetMs;
  const correction = async (record: RecordSummary, outcome: string, detail: Record<string, unknown>): Promise<void> => {
    const at = deps.now();
    const route = deps.routes.get(record.route);
    await deps.store.appendLog({
      route: record.route,
      key: record.key,
      receivedAt: record.receivedAt,
      kind: 'reconciliation',
      // A completed record read from the index alone has no attempts: its completing attempt is logged on it.
      attempt: record.attempts ?? 0,
      startedAt: at,
      endedAt: at,
      outcome,
      operationFingerprint: operationFingerprint(record.route, record.key, route?.action ?? 'unknown', record.fingerprint),
      detail: { runId, ...detail },
      expiresAt: record.expiresAt,
    });
  };

  const routeStates = new Map<string, Promise<boolean>>();
  const routeIsActive = (route: string): Promise<boolean> => {
    const store = deps.routeState;
    if (store === undefined) return Promise.resolve(false);
    let active = routeStates.get(route);
    if (active === undefined) {
      active = store.get(route).then((s) => s.state === 'active');
      routeStates.set(route, active);
    }
    return active;
  };

  const now = deps.now();
  const stuckBefore = now - options.stuckAfterMs;
  /**
   * What a re-send of this record claims: one per window, answered as accepted from now on. Its
   * time is read as the write goes out, not at the run's start: the claim sets lastEnqueuedAt,
   * and a FAILED record's copy must be sent within DEAD_LETTER_SEND_SECONDS of it.
   */
  const resendRequestOf = (full: EventRecord): ResendRequest => ({
    receivedAt: full.receivedAt,
    nowMs: deps.now(),
    sentBeforeMs: stuckBefore,
    answer: acceptedAnswer(full.route, full.key),
    answeredFailure: full.answer.status >= 500,
  });
  /**
   * Sends a message, and says so in the report when SQS refuses it: one record SQS cannot
   * carry (an old, oversized body, say) must not end the run for every other record.
   */
  const trySend = async (record: { route: string; key: string }, message: WorkMessage, wonAtMs?: number): Promise<boolean> => {
    // A FAILED record's dead-letter copy (`wonAtMs`: the time its claimResend wrote as
    // lastEnqueuedAt) goes out within DEAD_LETTER_SEND_SECONDS of that write or not at all, as
    // the executor's does (executor/dead-letter.ts, sendDeadLetter): a copy SQS stamps later than
    // DEAD_LETTER_STAMP_MARGIN_MS after it would be taken for a person's redrive and run FAILED
    // work with no person involved. Not sent, it stays in the retry partition for the next run.
    const leftMs = wonAtMs === undefined ? undefined : wonAtMs + DEAD_LETTER_SEND_SECONDS * 1000 - deps.now();
    if (leftMs !== undefined && leftMs <= 0) {
      flag(record, 'reenqueue-failed', `its dead-letter copy was not sent within ${DEAD_LETTER_SEND_SECONDS} s of its claim; the next run sends it`);
      return false;
    }
    try {
      await deps.queue.send(message, leftMs === undefined ? undefined : { signal: AbortSignal.timeout(leftMs) });
      return true;
    } catch (err) {
      flag(record, 'reenqueue-failed', err instanceof Error ? `${err.name}: ${err.message}` : String(err));
      return false;
    }
  };
  /**
   * The message a stuck record needs: its work, or the dead-letter copy a FAILED record never
   * got out. Undefined, and reported, when the record keeps no payload: then its work message
   * was sent and has not been lost (it waits in the queue, or in the DLQ after workers died on
   * it), or no delivery of it was acknowledged yet and the sender's retry brings it.
   */
  const messageFor = (full: EventRecord): WorkMessage | undefined => {
    const payload = keptPayloadOf(full);
    if (payload === undefined) {
      flag(full, 'payload-not-kept', 'its work message is in the queue or the DLQ, or no delivery of it was acknowledged yet');
      return undefined;
    }
    return full.status === RECORD_STATUS.failed
      ? {
          ...workMessageOf(full, payload),
          attempts: full.attempts,
          ...(full.lastError === undefined ? {} : { lastError: cut(full.lastError, LAST_ERROR_MAX_CHARS) }),
          reason: `failed after ${full.attempts} attempts; dead-letter copy re-sent by the reconciler`,
          deadLetterId: full.deadLetterId ?? '',
        }
      : workMessageOf(full, payload);
  };

  const routes = [...deps.routes.values()];
  const start: ReconcilePosition = options.start ?? { phase: 'parked', route: routes[0]?.name ?? '' };
  const reaches = (phase: (typeof PHASES)[number]): boolean => PHASES.indexOf(start.phase) <= PHASES.indexOf(phase);
  const checkpoint = async (position: ReconcilePosition): Promise<boolean> => options.checkpoint === undefined || (await options.checkpoint(position));

  /**
   * One route-by-route sweep of the sparse index (parked, or stranded), from `start` when this
   * run begins inside it. Undefined once done, or the position it stopped at.
   */
  const sweep = async (
    phase: 'parked' | 'stranded',
    list: (route: string, after: RecordRef | undefined) => AsyncIterable<readonly EventRecord[]>,
    handle: (route: ResolvedRoute, record: EventRecord) => Promise<void>,
  ): Promise<ReconcilePosition | undefined> => {
    const from = start.phase === phase ? start : undefined;
    for (let i = from === undefined ? 0 : Math.max(0, routes.findIndex((r) => r.name === from.route)); i < routes.length; i++) {
      const route = routes[i] as ResolvedRoute;
      let after = from?.route === route.name ? from.after : undefined;
      const here = (): ReconcilePosition => ({ phase, route: route.name, ...(after === undefined ? {} : { after }) });
      if (overBudget()) return here();
      for await (const page of list(route.name, after)) {
        for (const record of page) {
          if (overBudget()) return here();
          await handle(route, record);
          after = refOf(record);
        }
        if (!(await checkpoint(here()))) return here();
      }
    }
    return undefined;
  };

  // 1. Parked work of any age, through the sparse `parked` index: re-enqueue it on an
  //    active route (sent first, then unparked, so a failed send leaves it findable), keep
  //    it from expiring on a paused one.
  const keepUntilSeconds = Math.floor(now / 1000) + PARKED_KEEP_AHEAD_SECONDS;
  const parked = async (route: ResolvedRoute, record: EventRecord): Promise<void> => {
    const active = await routeIsActive(route.name);
    if (active && record.waitingTurn !== undefined && record.lineEntity !== undefined && deps.order !== undefined) {
      // Waiting in its entity's line: not lost, unless its turn came and its wake-up did not (the
      // worker that moved the line died before sending it). turn() also moves the line past a
      // head whose worker died between its completion and the move.
      const ref = { route: route.name, entity: record.lineEntity, key: record.key, receivedAt: record.receivedAt };
      const turn = await deps.order.turn(ref, now, record.expiresAt);
      if (turn.kind === 'wait') {
        if (record.expiresAt < keepUntilSeconds) {
          if (record.bodyObject !== undefined && deps.bodies !== undefined) await deps.bodies.renew(record.bodyObject);
          await deps.store.keepParked(record, now, route.ttlSeconds, keepUntilSeconds);
          await deps.order.markWaiting(ref, turn.place, Math.floor(now / 1000) + route.ttlSeconds);
        }
        counts.parked++;
        if (turn.head.status === RECORD_STATUS.failed) {
          flag(record, 'line-blocked', `waits behind ${turn.head.key} (place ${turn.head.place}), FAILED: redrive it, or skip it with retryproof order skip`);
        }
        return;
      }
    }
    if (active && counts.reenqueued < options.maxReenqueue) {
      // park keeps the payload: a parked record can always be sent from the table.
      const message = messageFor(record);
      if (message === undefined || !(await trySend(record, message))) return;
      if (await deps.store.unpark(record, deps.now())) {
        counts.reenqueued++;
        await correction(record, 'unparked', { reason: 'parked on a route that is active again' });
      }
      return;
    }
    if (record.expiresAt < keepUntilSeconds) {
      // A paused route's work sends no message, so no send keeps its body object alive: the
      // object is renewed here, before its record is given a whole TTL more (domain/body-object.ts).
      // One that is gone stays gone: the record is kept all the same, for people to see.
      if (record.bodyObject !== undefined && deps.bodies !== undefined) await deps.bodies.renew(record.bodyObject);
      // Its place in its line first, then the record: a place never ends before its record.
      if (record.lineEntity !== undefined && deps.order !== undefined) {
        await deps.order.keep({ route: route.name, entity: record.lineEntity, key: record.key, receivedAt: record.receivedAt }, now, Math.floor(now / 1000) + route.ttlSeconds);
      }
      await deps.store.keepParked(record, now, route.ttlSeconds, keepUntilSeconds);
    }
    counts.parked++;
    flag(record, 'parked', active ? 'left for the next run: the per-run re-enqueue bound was reached' : undefined);
  };

  // 2. Records an earlier run could not re-send (SQS down, or refusing them), whatever their
  //    age: without this, one that left the 24 h window unrepaired would be lost from view.
  const stranded = async (_route: ResolvedRoute, full: EventRecord): Promise<void> => {
    const settled =
      full.status === RECORD_STATUS.completed ||
      full.status === RECORD_STATUS.parked ||
      (full.status === RECORD_STATUS.failed && full.deadLettered !== undefined);
    if (settled) {
      await deps.store.clearStranded(full);
      return;
    }
    if (counts.reenqueued >= options.maxReenqueue) {
      flag(full, 'reenqueue-limit', 'left for the next run: the per-run re-enqueue bound was reached');
      return;
    }
    // fail keeps the payload; a record kept here for want of one is re-sent once a copy kept it.
    const message = messageFor(full);
    if (message === undefined) {
      // No copy was answered 2xx, or its message waits in the DLQ: watched for as long as its
      // sender may still retry, then left to the DLQ and to the sender.
      const windowMs = (deps.routes.get(full.route)?.senderRetryWindowSeconds ?? 0) * 1000;
      if (now - full.receivedAt > windowMs + options.stuckAfterMs) await deps.store.clearStranded(full);
      return;
    }
    const request = resendRequestOf(full);
    if (!(await deps.store.claimResend(full.route, full.key, request))) return;
    if (await trySend(full, message, full.status === RECORD_STATUS.failed ? request.nowMs : undefined)) {
      await deps.store.clearStranded(full);
      counts.reenqueued++;
      await correction(full, 're-enqueued', { was: full.status, from: 'retry partition' });
    }
  };

  // 3. The window: report what failed, and repair what is stuck as we go.
  const windowRecord = async (record: RecordSummary): Promise<void> => {
    counts.scanned++;
    if (record.status === RECORD_STATUS.parked) return; // counted by the parked sweep
    const lastSent = record.lastEnqueuedAt ?? record.receivedAt;
    if (record.status === RECORD_STATUS.failed) {
      counts.failed++;
      flag(record, 'failed', record.lastError);
    }
    // A FAILED record's lost dead-letter copy is the retry partition's business (step 2):
    // `fail` put it there, so no conditional write is spent here on every failed record.
    const stuck =
      lastSent < stuckBefore &&
      (record.status === RECORD_STATUS.received ||
        (record.status === RECORD_STATUS.executing && (record.leaseUntil ?? 0) < stuckBefore));
    if (!stuck) return;
    if (counts.reenqueued >= options.maxReenqueue) {
      flag(record, 'reenqueue-limit', 'left for the next window: the per-run re-enqueue bound was reached');
      return;
    }
    if (!deps.routes.has(record.route)) return;
    // The whole record: its message needs the body, and the resend the answer it gives now.
    const full = await deps.store.getRecord(record.route, record.key);
    if (full?.receivedAt !== record.receivedAt) return;
    const message = messageFor(full);
    if (message === undefined) {
      // Watched beyond the window (the retry partition): a later copy may keep the payload.
      await deps.store.markStranded(full);
      return;
    }
    // One resend per window, whoever else tries: the write decides, then we send.
    if (!(await deps.store.claimResend(record.route, record.key, resendRequestOf(full)))) return;
    if (await trySend(record, message)) {
      counts.reenqueued++;
      await correction(record, 're-enqueued', { was: record.status });
    } else {
      // Found again by every later run, also once it is older than the window.
      await deps.store.markStranded(full);
    }
  };

  // What the effects check keeps of the window (see the header): hashes, never records.
  const seed = options.keys?.seed ?? randomInt(0x7fffffff);
  const hashOf = (route: string, key: string): number => hash52(scopedKey(route, key), seed);
  const buckets = bucketsOf(fromMs, toMs);
  const bucketIndex = new Map(buckets.map((b, i) => [b, i]));
  const ledgerOfRoute = new Map<string, Ledger>();
  const routesByLedger = new Map<Ledger, Set<string>>();
  for (const route of routes) {
    const ledger = deps.ledgers?.get(route.action);
    if (ledger === undefined) continue;
    ledgerOfRoute.set(route.name, ledger);
    routesByLedger.set(ledger, (routesByLedger.get(ledger) ?? new Set()).add(route.name));
  }
  const checksEffects = routesByLedger.size > 0;
  let windowKeys = new KeyHashes();
  let completedKeys = new Map<string, CompletedKeys>();
  const completedOf = (route: string): CompletedKeys => {
    let keys = completedKeys.get(route);
    if (keys === undefined) completedKeys.set(route, (keys = new CompletedKeys()));
    return keys;
  };
  const remember = (record: RecordSummary, bucket: string, shard: number): void => {
    const h = hashOf(record.route, record.key);
    windowKeys.add(h);
    if (!ledgerOfRoute.has(record.route) || record.status !== RECORD_STATUS.completed) return;
    completedOf(record.route).add(h, partOf(bucketIndex.get(bucket) ?? 0, shard));
  };
  /**
   * ownPart: this run holds keys of its own, read in the window phase and not yet saved;
   * windowRemembered: it read the window from its start, so they are all of the window's. (An
   * object: flow analysis does not see the phases' closures assign a plain let.)
   */
  const kept = { ownPart: false, windowRemembered: false };
  const exportPart = (): WindowKeysPart => ({
    records: windowKeys.values(),
    completed: new Map([...completedKeys].map(([route, keys]) => [route, keys.export()])),
  });

  let pages = 0;
  const windowPass = async (): Promise<ReconcilePosition | undefined> => {
    const from = start.phase === 'window' ? start : undefined;
    // Where this run stands: the page's start, or just after the last record handled in it
    // (kept as the record itself: a position is made only when one is asked for).
    let at: WindowStart = from ?? { bucket: buckets[0] ?? hourBucket(fromMs), shard: 0 };
    let last: RecordSummary | undefined;
    const here = (): ReconcilePosition =>
      last === undefined ? { phase: 'window', ...at } : { phase: 'window', bucket: at.bucket, shard: at.shard, after: refOf(last) };
    // Remembered from the window's start, or, carried between runs, from wherever this run starts.
    const remembering = checksEffects && (from === undefined || options.keys !== undefined);
    if (buckets.length === 0) return undefined;
    if (overBudget()) return here();
    for await (const page of deps.store.readWindow(fromMs, toMs, at)) {
      pages++;
      if (page.bucket !== at.bucket || page.shard !== at.shard) at = { bucket: page.bucket, shard: page.shard };
      for (const record of page.records) {
        if (overBudget()) return here();
        if (remembering) {
          remember(record, page.bucket, page.shard);
          kept.ownPart = true;
        }
        await windowRecord(record);
        last = record;
      }
      options.onProgress?.({ pages, records: counts.scanned });
      if (page.next === undefined) break;
      at = page.next;
      last = undefined;
      if (!(await checkpoint(here()))) return here();
    }
    kept.windowRemembered = checksEffects && from === undefined;
    return undefined;
  };

  // 4. Each ledger against the window. Findings wait for the phase's end (see the header).
  const effectFindings: Flagged[] = [];
  const effectCounts = { missing: 0, orphans: 0 };
  /**
   * The window's keys for the effects check: this run's, when it read the whole window; else
   * this run's part and the parts earlier runs of the window saved; else (none carried, or one
   * lost) read again from the window. False when the budget ran out.
   */
  const windowKeysReady = async (): Promise<boolean> => {
    if (kept.windowRemembered) return true;
    const earlier = options.keys?.earlier;
    if (earlier !== undefined) {
      for await (const part of earlier()) {
        if (overBudget()) return false;
        windowKeys.addAll(part.records);
        for (const [route, done] of part.completed) completedOf(route).absorb(done.hashes, done.parts);
      }
      return true;
    }
    windowKeys = new KeyHashes();
    completedKeys = new Map();
    kept.ownPart = false;
    for await (const page of deps.store.readWindow(fromMs, toMs)) {
      if (overBudget()) return false;
      for (const record of page.records) remember(record, page.bucket, page.shard);
    }
    return true;
  };
  /** False when the budget ran out. */
  const checkLedger = async (ledger: Ledger, ledgerRoutes: ReadonlySet<string>): Promise<boolean> => {
    // A configured route of another ledger's action is that ledger's business.
    const ours = (e: LedgerEntry): boolean => !deps.routes.has(e.route) || ledgerRoutes.has(e.route);
    // Keys not in the window, by what their record says: received before the window (its
    // receipt, >= 0), after it (still settling), or no record at all (an orphan).
    const IN_WINDOW = -1;
    const SETTLING = -2;
    const ORPHAN = -3;
    const outside = new Map<string, number>();
    const verdictOf = (e: LedgerEntry, h: number): number =>
      windowKeys.has(h) ? IN_WINDOW : (outside.get(scopedKey(e.route, e.idempotencyKey)) ?? ORPHAN);
    const orphans = new Map<string, { route: string; key: string; entryIds: string[] }>();
    const allKeys = new KeyHashes();
    const postedKeys = new KeyHashes();
    // Received before the window, executed inside it (a redrive days later, say): the
    // lookback reads the ledger back to the earliest such receipt. A running minimum.
    let oldest = fromMs;
    const until = deps.now() + 1;
    // From the clock bound before the window: an in-window record's entry may carry a stamp
    // that much earlier than its receipt (stampSkewMsOf).
    for await (const page of ledgerPages(ledger.listWindow(fromMs - stampSkewMs, until))) {
      if (overBudget()) return false;
      const unknown = new Map<string, { route: string; key: string }>();
      for (const e of page) {
        if (!ours(e)) continue;
        const k = scopedKey(e.route, e.idempotencyKey);
        if (!windowKeys.has(hashOf(e.route, e.idempotencyKey)) && !outside.has(k)) unknown.set(k, { route: e.route, key: e.idempotencyKey });
      }
      if (unknown.size > 0) {
        const found = new Map((await deps.store.getRecords([...unknown.values()])).map((r) => [scopedKey(r.route, r.key), r]));
        for (const k of unknown.keys()) {
          const r = found.get(k);
          outside.set(k, r === undefined ? ORPHAN : r.receivedAt >= toMs ? SETTLING : r.receivedAt < fromMs ? r.receivedAt : IN_WINDOW);
        }
      }
      for (const e of page) {
        if (!ours(e)) continue;
        const h = hashOf(e.route, e.idempotencyKey);
        const verdict = verdictOf(e, h);
        if (verdict === ORPHAN) {
          const k = scopedKey(e.route, e.idempotencyKey);
          const orphan = orphans.get(k) ?? { route: e.route, key: e.idempotencyKey, entryIds: [] };
          orphan.entryIds.push(e.entryId);
          orphans.set(k, orphan);
          continue;
        }
        // Work younger than the window's end is still settling: a later run looks at it.
        if (verdict === SETTLING) continue;
        if (verdict >= 0 && verdict < oldest) oldest = verdict;
        allKeys.add(h);
        if (e.status === LEDGER_STATUS.posted) postedKeys.add(h);
      }
    }
    /** An entry of the record generation the window knows: posted no earlier than its receipt, by the clocks' bound. */
    const sameGeneration = (e: LedgerEntry, verdict: number): boolean => e.postedAt >= (verdict >= 0 ? verdict : fromMs) - stampSkewMs;
    if (oldest < fromMs) {
      for await (const page of ledgerPages(ledger.listWindow(oldest - stampSkewMs, fromMs - stampSkewMs))) {
        if (overBudget()) return false;
        for (const e of page) {
          if (!ours(e) || e.status !== LEDGER_STATUS.posted) continue;
          const verdict = outside.get(scopedKey(e.route, e.idempotencyKey));
          if (verdict !== undefined && verdict >= 0 && sameGeneration(e, verdict)) postedKeys.add(hashOf(e.route, e.idempotencyKey));
        }
      }
    }
    for (const { route, key, entryIds } of orphans.values()) {
      effectCounts.orphans++;
      effectFindings.push({ route, key, finding: 'orphan-entry', detail: `entries ${entryIds.join(', ')}` });
    }

    // Keys with two posted entries or more: read their entries (rare), keep one, reverse the others.
    const twice = postedKeys.seal().repeated();
    if (twice.size > 0) {
      const groups = new Map<string, LedgerEntry[]>();
      for await (const page of ledgerPages(ledger.listWindow(Math.min(oldest, fromMs) - stampSkewMs, until))) {
        if (overBudget()) return false;
        for (const e of page) {
          if (!ours(e) || e.status !== LEDGER_STATUS.posted) continue;
          const h = hashOf(e.route, e.idempotencyKey);
          if (!twice.has(h)) continue;
          const verdict = verdictOf(e, h);
          if (verdict === ORPHAN || verdict === SETTLING || !sameGeneration(e, verdict)) continue;
          const k = scopedKey(e.route, e.idempotencyKey);
          const group = groups.get(k);
          if (group === undefined) groups.set(k, [e]);
          else group.push(e);
        }
      }
      const duplicated = [...groups.values()].filter((g) => g.length > 1);
      const records = new Map(
        (await deps.store.getRecords(duplicated.map((g) => ({ route: (g[0] as LedgerEntry).route, key: (g[0] as LedgerEntry).idempotencyKey })))).map((r) => [
          scopedKey(r.route, r.key),
          r,
        ]),
      );
      for (const group of duplicated) {
        const first = group[0] as LedgerEntry;
        const record = records.get(scopedKey(first.route, first.idempotencyKey));
        // Gone (expired), in flight or FAILED: the run that completes it (a redrive's) may post
        // the entry to keep; an earlier run's entry may stand without its effect (seed 961).
        if (record?.status === RECORD_STATUS.failed) {
          effectFindings.push({ route: record.route, key: record.key, finding: 'failed-with-entries', detail: `entries ${group.map((e) => e.entryId).join(', ')}` });
        }
        if (record?.status !== RECORD_STATUS.completed) continue;
        const posted = group.sort(byPostingOrder);
        const keep = keptEntryOf(posted, record);
        for (const entry of posted) {
          if (entry === keep) continue;
          if (overBudget()) return false;
          const reversalId = reversalIdOf(entry.entryId);
          const result = await ledger.reverse(entry.entryId, {
            reversalId,
            reason: `duplicate effect of ${record.route}/${record.key}; kept ${keep.entryId}`,
            at: deps.now(),
          });
          if (result !== 'reversed') continue;
          counts.reversed++;
          if (reversals.length < REPORT_LIST_LIMIT) {
            reversals.push({ route: record.route, key: record.key, entryId: entry.entryId, keptEntryId: keep.entryId, reversalId });
          } else unlisted.reversals++;
          await correction(record, 'duplicate-reversed', { entryId: entry.entryId, keptEntryId: keep.entryId, reversalId });
        }
      }
    }

    // Completed work with no entry: named by reading again the few partitions that hold it.
    const missingHashes = new KeyHashes();
    const missingParts = new Set<number>();
    allKeys.seal();
    for (const route of ledgerRoutes) {
      const found = completedKeys.get(route)?.missingFrom(allKeys);
      if (found === undefined) continue;
      missingHashes.addAll(found.hashes.values());
      for (const part of found.parts) missingParts.add(part);
    }
    const missing = { hashes: missingHashes.seal(), parts: [...missingParts].sort((a, b) => a - b) };
    for (const part of missing.parts) {
      const bucket = buckets[Math.floor(part / PART_SHARDS)] as string;
      const shard = part % PART_SHARDS;
      for await (const page of deps.store.readWindow(fromMs, toMs, { bucket, shard })) {
        if (overBudget()) return false;
        for (const record of page.records) {
          if (record.status !== RECORD_STATUS.completed || !ledgerRoutes.has(record.route)) continue;
          if (!missing.hashes.has(hashOf(record.route, record.key))) continue;
          // Never re-executed blindly: the effect may exist somewhere the ledger does not show.
          effectCounts.missing++;
          effectFindings.push({
            route: record.route,
            key: record.key,
            finding: 'missing-effect',
            detail: `completed at ${new Date(record.completedAt ?? 0).toISOString()} with no ledger entry`,
          });
        }
        if (page.next?.bucket !== bucket || page.next.shard !== shard) break;
      }
    }
    return true;
  };
  const effectsPass = async (): Promise<ReconcilePosition | undefined> => {
    if (!checksEffects) return undefined;
    const here: ReconcilePosition = { phase: 'effects' };
    // Saved before anything is added to it: what a stop in this phase hands on is this run's own part.
    if (kept.ownPart && options.keys !== undefined && !kept.windowRemembered) {
      await options.keys.save(exportPart());
      kept.ownPart = false;
    }
    if (!(await windowKeysReady())) return here;
    windowKeys.seal();
    for (const [ledger, ledgerRoutes] of routesByLedger) if (!(await checkLedger(ledger, ledgerRoutes))) return here;
    counts.missing += effectCounts.missing;
    counts.orphans += effectCounts.orphans;
    for (const finding of effectFindings) listFinding(finding);
    return undefined;
  };

  // Each phase returns where it stopped (its budget ran out, or the cursor was lost), or undefined once done.
  let stoppedAt: ReconcilePosition | undefined;
  if (reaches('parked')) stoppedAt = await sweep('parked', (route, after) => deps.store.listParked(route, after), parked);
  if (stoppedAt === undefined && reaches('stranded')) {
    stoppedAt = await sweep('stranded', (route, after) => deps.store.listStranded(route, after), stranded);
  }
  if (stoppedAt === undefined && reaches('window')) stoppedAt = await windowPass();
  if (stoppedAt === undefined && reaches('effects')) stoppedAt = await effectsPass();
  // Stopped inside the window, or inside the effects check after reading the whole window: the
  // next run of it gets this run's keys, so it need not read them again.
  const handOn = (stoppedAt?.phase === 'window' && kept.ownPart) || (stoppedAt?.phase === 'effects' && kept.windowRemembered);
  if (handOn && options.keys !== undefined) await options.keys.save(exportPart());

  return {
    runId,
    window: { fromMs, toMs, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() },
    startedAt,
    durationMs: deps.now() - startedAt,
    counts,
    needsAttention,
    reversals,
    ...(unlisted.needsAttention + unlisted.reversals > 0 ? { unlisted } : {}),
    ...(options.start === undefined ? {} : { startedFrom: options.start }),
    stoppedEarly: stoppedAt !== undefined,
    ...(stoppedAt === undefined ? {} : { stoppedAt }),
  };
}
