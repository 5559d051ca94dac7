/**
 * The scheduled runs and their cursor: one item in the events table (pk RECONCILER, sk
 * CURSOR) that says which window the runs are reconciling, where the last run stopped, and
 * which run holds it now.
 *
 * A run reconciles one window:
 *  - the cursor's, when a run before it stopped early: it starts where that run stopped
 *    (reconcile.ts, "The position"), so a window larger than one run's budget is finished by
 *    the next runs, each record handled once;
 *  - else the current one, [now - windowHours, now - settle], but starting no later than the
 *    end of the last finished window: while windows take more than one run, no receipt falls
 *    between two of them.
 * When its budget ends it saves where it stopped; when it finishes, it marks the window done.
 * A run that stops inside the window (or inside the effects check) saves its part of the
 * window's keys as chunk items, so the run that does the effects check need not read the
 * window again (reconcile.ts, "The effects check"). A run that begins at the effects check has
 * its whole budget for it; if three such runs in a row run out, the check is given up for the
 * window and reported (`effects-unchecked`), so the runs never stay stuck on one window.
 * Windows overlap by design (each hourly run looks at the last 24 h): a record is looked at by
 * each window that holds it, once per window.
 *
 * Two runs at once (a scheduled run and `retryproof reconcile`, or a late invocation) must not
 * work on one window together. The first takes the cursor with a lease that ends with its
 * function (its budget and the report's reserve, within the Lambda timeout); the second finds
 * it held and does nothing but say so. A run that died holding it is taken over once its lease
 * has ended by twice the clock bound (protocol v3, decision 2), from its last checkpoint. Every
 * cursor write is conditional on the holder, so a run that lost the cursor (it ran past its
 * lease and was taken over) finds out at its next checkpoint and stops. Its work until then was
 * safe anyway: every record write is conditional.
 *
 * Runs that would repeat one another. With several Regions each replica Region runs its own
 * reconciler on the hourly schedule, over the one table and its one cursor (the lease above
 * serializes them: the cursor item is linearizable under MRSC). Two runs an hour, minutes apart,
 * would each reconcile the whole 24 h window: twice the reads for nothing. So a scheduled run that
 * finds a finished window (`done`) ending less than `minGapMs` (half the schedule's interval)
 * before its own window would end lets the cursor go and does nothing (`notDue` in the report).
 * Only a finished window is skipped: an unfinished one is always continued, whatever the gap, and
 * a window chosen by hand (create-reconciler.ts) never comes here. Nothing is left unrepaired when
 * a whole Region is lost: the other Regions' runs then find the last finished window older by an
 * hour at each run, so the next one runs, and its window starts no later than where the last
 * finished one ended (above).
 *
 * The sweep. A deployment of several Regions has no TTL (an MRSC table cannot have it), so a
 * scheduled run that has finished its window, or found it not due, spends the rest of its
 * budget sweeping expired items (expiry-sweep.ts), its position kept on this cursor too.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { CLOCK_SKEW_SECONDS, takeoverMarginMs } from '../config/route-config.ts';
import type { CursorState, ExpirySweepStore, ReconcilePosition } from '../ports/reconciler-store.ts';
import { sweepExpired } from './expiry-sweep.ts';
import type { SweepOptions, SweepReport } from './expiry-sweep.ts';
import { reconcile } from './reconcile.ts';
import type { KeysCarry, ReconcileDeps, ReconcileOptions, ReconcileReport } from './reconcile.ts';
import { REPORT_RESERVE_MS } from './reconciler-budget.ts';

export interface ScheduledRunOptions extends Pick<ReconcileOptions, 'budgetMs' | 'stuckAfterMs' | 'maxReenqueue' | 'onProgress'> {
  /** The window as the schedule sees it now: [now - windowHours, now - settle]. */
  readonly current: { readonly fromMs: number; readonly toMs: number };
  /** @default CHECKPOINT_EVERY_MS */
  readonly checkpointEveryMs?: number;
  /**
   * A finished window ending less than this before `current` ends is not reconciled again (see
   * the header): half the schedule's interval. @default - never skipped
   */
  readonly minGapMs?: number;
  /**
   * Sweep expired items with what is left of the budget once the window is done (expiry-sweep.ts):
   * a deployment of several Regions, whose MRSC table has no TTL. Needs deps.expiry. @default - no sweep
   */
  readonly sweep?: SweepOptions;
}

/** A scheduled run's dependencies: the reconciler's, and the sweep's store when it sweeps. */
export type ScheduledRunDeps = ReconcileDeps & { readonly runId?: string; readonly expiry?: ExpirySweepStore };


/** The report of a run that did nothing: the window was held by another run, or finished a moment ago. */
function idleReport(runId: string, startedAt: number, window: { fromMs: number; toMs: number }, why: Pick<ReconcileReport, 'skipped' | 'notDue'>): ReconcileReport {
  return {
    runId,
    window: { ...window, from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString() },
    startedAt,
    durationMs: 0,
    counts: { scanned: 0, reenqueued: 0, reversed: 0, missing: 0, orphans: 0, failed: 0, parked: 0, needsAttention: 0 },
    needsAttention: [],
    reversals: [],
    stoppedEarly: false,
    ...why,
  };
}

/** How long key chunks outlive their window's last run: TTL removes them after. */
const KEY_CHUNK_SECONDS = 2 * 86_400;
/**
 * The cursor is written at most this often while a run goes (and always when it stops): a run
 * that dies hands at most this much work to the next one again, whose conditional writes
 * refuse what was done (a write a page would cost 200 writes a run over 25 hours x 8 shards).
 */
const CHECKPOINT_EVERY_MS = 5_000;
/** Runs in a row that may begin at the effects check and run out of budget in it again. */
const MAX_EFFECTS_TRIES = 3;

/** One scheduled run: the cursor's unfinished window from where it stopped, or the current one. */
export async function reconcileScheduled(deps: ScheduledRunDeps, options: ScheduledRunOptions): Promise<ReconcileReport> {
  const runId = deps.runId ?? `sched_${randomUUID()}`;
  const startedAt = deps.now();
  const leaseUntil = startedAt + options.budgetMs + REPORT_RESERVE_MS;
  // A lease written by another run (another Region's, too) is over only twice the clock bound after its end, by our clock.
  const take = await deps.store.takeCursor(runId, leaseUntil, startedAt - takeoverMarginMs(deps.clockSkewSeconds ?? CLOCK_SKEW_SECONDS));
  if (!take.taken) return idleReport(runId, startedAt, options.current, { skipped: { reason: 'held', holder: take.holder, leaseUntil: take.leaseUntil } });

  const saved = take.cursor;
  /**
   * The sweep, once the window needs nothing more of this run: what is left of the budget.
   * Its position goes on the cursor at each checkpoint (throttled as the phases' are).
   */
  let savedAt = deps.now();
  const sweepAfter = async (base: CursorState): Promise<{ cursor: CursorState; sweep?: SweepReport }> => {
    if (options.sweep === undefined || deps.expiry === undefined) return { cursor: base };
    let current = base;
    const { position, report } = await sweepExpired(deps.expiry, base.sweep, options.sweep, {
      now: deps.now,
      overBudget: () => deps.now() - startedAt >= options.budgetMs,
      checkpoint: async (sweep) => {
        if (deps.now() - savedAt < (options.checkpointEveryMs ?? CHECKPOINT_EVERY_MS)) return true;
        if (!(await deps.store.saveCursor(runId, { ...current, sweep }, leaseUntil))) return false;
        current = { ...current, sweep };
        savedAt = deps.now();
        return true;
      },
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    });
    return { cursor: { ...base, sweep: position }, sweep: report };
  };
  // Finished by another run a moment ago (another Region's): the next due run does this window's work.
  if (saved?.position.phase === 'done' && options.minGapMs !== undefined && options.current.toMs - saved.toMs < options.minGapMs) {
    // The budget this run would have spent on the window goes to the sweep.
    const swept = await sweepAfter(saved);
    await deps.store.releaseCursor(runId, swept.cursor);
    return {
      ...idleReport(runId, startedAt, options.current, { notDue: { reason: 'finished-recently', finishedToMs: saved.toMs, minGapMs: options.minGapMs } }),
      ...(swept.sweep === undefined ? {} : { sweep: swept.sweep, durationMs: deps.now() - startedAt }),
    };
  }
  const resumed = saved !== undefined && saved.position.phase !== 'done' ? saved : undefined;
  let cursor: CursorState = resumed
    ? {
        ...resumed,
        runs: resumed.runs + 1,
        // The run before died holding it inside the window: its part of the keys died with it.
        keysLost: resumed.keysLost || (take.tookOver && (resumed.position.phase === 'window' || resumed.position.phase === 'effects')),
      }
    : {
        fromMs: Math.min(options.current.fromMs, saved?.toMs ?? options.current.fromMs),
        toMs: options.current.toMs,
        position: { phase: 'parked', route: '' },
        runs: 1,
        windowId: randomUUID(),
        seed: randomInt(0x7fffffff),
        keyChunks: [],
        keysLost: false,
        effectsTries: 0,
        ...(saved?.sweep === undefined ? {} : { sweep: saved.sweep }),
      };
  // This run is on the cursor before any work: one that dies still counts.
  await deps.store.saveCursor(runId, cursor, leaseUntil);
  savedAt = deps.now();

  const keys: KeysCarry = {
    seed: cursor.seed,
    earlier: cursor.keysLost ? undefined : () => deps.store.readKeys(cursor.keyChunks),
    save: async (part) => {
      const chunks = await deps.store.saveKeys(cursor.windowId, runId, part, Math.floor(deps.now() / 1000) + KEY_CHUNK_SECONDS);
      cursor = { ...cursor, keyChunks: [...cursor.keyChunks, ...chunks] };
    },
  };
  let report: ReconcileReport;
  try {
    report = await reconcile(deps, {
      fromMs: cursor.fromMs,
      toMs: cursor.toMs,
      budgetMs: options.budgetMs,
      stuckAfterMs: options.stuckAfterMs,
      maxReenqueue: options.maxReenqueue,
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      ...(resumed === undefined ? {} : { start: resumed.position }),
      checkpoint: async (position) => {
        const next = { ...cursor, position };
        // At most one write every CHECKPOINT_EVERY_MS: a run that dies hands on that much work again.
        if (deps.now() - savedAt < (options.checkpointEveryMs ?? CHECKPOINT_EVERY_MS)) return true;
        if (!(await deps.store.saveCursor(runId, next, leaseUntil))) return false;
        cursor = next;
        savedAt = deps.now();
        return true;
      },
      keys,
    });
  } catch (err) {
    // Let the next run go on from the last checkpoint at once, not after the lease.
    await deps.store.releaseCursor(runId, cursor);
    throw err;
  }
  const stuckInEffects = resumed?.position.phase === 'effects' && report.stoppedAt?.phase === 'effects';
  const effectsTries = stuckInEffects ? cursor.effectsTries + 1 : 0;
  const givenUp = effectsTries >= MAX_EFFECTS_TRIES;
  const position: ReconcilePosition = givenUp ? { phase: 'done' } : (report.stoppedAt ?? { phase: 'done' });
  // A window left unfinished keeps the rest of the budget, none: the sweep waits for a run that finishes one.
  const swept = position.phase === 'done' ? await sweepAfter({ ...cursor, position, effectsTries }) : { cursor: { ...cursor, position, effectsTries } };
  const released = await deps.store.releaseCursor(runId, swept.cursor);
  const cursorInfo = { runs: cursor.runs, resumed: resumed !== undefined, ...(released ? {} : { lost: true as const }) };
  const withSweep = swept.sweep === undefined ? {} : { sweep: swept.sweep, durationMs: deps.now() - startedAt };
  if (!givenUp) return { ...report, cursor: cursorInfo, ...withSweep };
  // Never stuck on one window: the next runs go on to the next windows, which hold most of this one.
  const detail = `the effects check of ${new Date(cursor.fromMs).toISOString()} .. ${new Date(cursor.toMs).toISOString()} needs more than one run's budget: given up after ${effectsTries} runs`;
  return {
    ...report,
    counts: { ...report.counts, needsAttention: report.counts.needsAttention + 1 },
    needsAttention: [...report.needsAttention, { route: '*', key: '*', finding: 'effects-unchecked', detail }],
    stoppedEarly: false,
    cursor: cursorInfo,
    ...withSweep,
  };
}
