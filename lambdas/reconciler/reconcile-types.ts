/** What a reconcile run is given, what it reports, and the findings it names (reconcile.ts runs it). */
import type { ResolvedRoute } from '../config/resolve-config.ts';
import type { BodyObjects } from '../ports/body-objects.ts';
import type { EntityOrder } from '../ports/entity-order.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { ReconcilePosition, ReconcilerStore, WindowKeysPart } from '../ports/reconciler-store.ts';
import type { RouteStateStore } from '../ports/route-state-store.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import type { SweepReport } from './expiry-sweep.ts';

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
   * than `minGapMs` before this run's window would end: this run did nothing (reconcile-cursor.ts;
   * docs/architecture.md#several-regions). Apart from `skipped`, which says the cursor was held.
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
