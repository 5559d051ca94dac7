/**
 * The scheduled runs and their cursor: one item in the events table (pk RECONCILER, sk
 * CURSOR) that says which window the runs are reconciling, where the last run stopped, and
 * which run holds it now.
 *
 * A run reconciles the cursor's window from where the run before stopped (reconcile.ts, the
 * position), else the current one, [now - windowHours, now - settle], starting no later than the
 * end of the last finished window. It saves where it stopped, or marks the window done. A run
 * that stops inside the window saves its part of the window's keys as chunk items; if three runs
 * in a row begin at the effects check and run out in it, the check is given up and reported
 * (`effects-unchecked`). Windows overlap (each hourly run looks at the last 24 h): a record is
 * looked at once per window that holds it. why: docs/architecture.md#a-day-of-traffic-is-large
 *
 * Two runs never work on one window together: the first takes the cursor with a lease that ends
 * with its function, the second finds it held and says so. A lease is taken over twice the clock
 * bound after it ends, and every cursor write is conditional on the holder, so a run that lost the
 * cursor stops at its next checkpoint. A scheduled run that finds a window finished less than
 * `minGapMs` before its own would end does nothing but sweep (`notDue`): another Region's run did
 * it. why: docs/architecture.md#several-regions
 *
 * The sweep (expiry-sweep.ts) takes what is left of the budget once the window is done or not due,
 * its position on this cursor too. why: docs/architecture.md#the-sweep-of-expired-items
 */
import { randomInt, randomUUID } from 'node:crypto';
import { CLOCK_SKEW_SECONDS, takeoverMarginMs } from '../config/route-config.ts';
import type { CursorState, ExpirySweepStore, LastRunReport, ReconcilePosition } from '../ports/reconciler-store.ts';
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

/** One scheduled run holding the cursor: its lease, and when it last wrote the cursor. */
interface CursorRun {
  readonly deps: ScheduledRunDeps;
  readonly options: ScheduledRunOptions;
  readonly runId: string;
  readonly startedAt: number;
  readonly leaseUntil: number;
  savedAt: number;
}

/** One scheduled run: the cursor's unfinished window from where it stopped, or the current one. */
export async function reconcileScheduled(deps: ScheduledRunDeps, options: ScheduledRunOptions): Promise<ReconcileReport> {
  const runId = deps.runId ?? `sched_${randomUUID()}`;
  const startedAt = deps.now();
  const leaseUntil = startedAt + options.budgetMs + REPORT_RESERVE_MS;
  // A lease written by another run (another Region's, too) is over only twice the clock bound after its end, by our clock.
  const take = await deps.store.takeCursor(runId, leaseUntil, startedAt - takeoverMarginMs(deps.clockSkewSeconds ?? CLOCK_SKEW_SECONDS));
  if (!take.taken) return idleReport(runId, startedAt, options.current, { skipped: { reason: 'held', holder: take.holder, leaseUntil: take.leaseUntil } });
  const run: CursorRun = { deps, options, runId, startedAt, leaseUntil, savedAt: deps.now() };
  const saved = take.cursor;
  // Finished by another run a moment ago (another Region's): the next due run does this window's work.
  if (saved?.position.phase === 'done' && options.minGapMs !== undefined && options.current.toMs - saved.toMs < options.minGapMs) {
    return notDue(run, saved, options.minGapMs);
  }
  const resumed = saved !== undefined && saved.position.phase !== 'done' ? saved : undefined;
  const cursor = { state: resumed === undefined ? freshCursor(options.current, saved) : resumedCursor(resumed, take.tookOver) };
  // This run is on the cursor before any work: one that dies still counts.
  await deps.store.saveCursor(runId, cursor.state, leaseUntil);
  run.savedAt = deps.now();
  const report = await reconcileWindow(run, cursor, resumed);
  return finish(run, cursor.state, resumed, report);
}

/** A window not due: the budget this run would have spent on it goes to the sweep. */
async function notDue(run: CursorRun, saved: CursorState, minGapMs: number): Promise<ReconcileReport> {
  const swept = await sweepRest(run, saved);
  await run.deps.store.releaseCursor(run.runId, swept.cursor);
  return {
    ...idleReport(run.runId, run.startedAt, run.options.current, { notDue: { reason: 'finished-recently', finishedToMs: saved.toMs, minGapMs } }),
    ...(swept.sweep === undefined ? {} : { sweep: swept.sweep, durationMs: run.deps.now() - run.startedAt }),
  };
}

/** The cursor of a new window: the current one, starting no later than where the last finished one ended. */
function freshCursor(current: ScheduledRunOptions['current'], saved: CursorState | undefined): CursorState {
  return {
    fromMs: Math.min(current.fromMs, saved?.toMs ?? current.fromMs),
    toMs: current.toMs,
    position: { phase: 'parked', route: '' },
    runs: 1,
    windowId: randomUUID(),
    seed: randomInt(0x7fffffff),
    keyChunks: [],
    keysLost: false,
    effectsTries: 0,
    ...(saved?.sweep === undefined ? {} : { sweep: saved.sweep }),
  };
}

/** The cursor of an unfinished window, one run more. */
function resumedCursor(resumed: CursorState, tookOver: boolean): CursorState {
  return {
    ...resumed,
    runs: resumed.runs + 1,
    // The run before died holding it inside the window: its part of the keys died with it.
    keysLost: resumed.keysLost || (tookOver && (resumed.position.phase === 'window' || resumed.position.phase === 'effects')),
  };
}

/** Whether the cursor may be written now: at most once every CHECKPOINT_EVERY_MS, so a run that dies hands on that much work again. */
function checkpointDue(run: CursorRun): boolean {
  return run.deps.now() - run.savedAt >= (run.options.checkpointEveryMs ?? CHECKPOINT_EVERY_MS);
}

/** Reconciles the cursor's window from its position, keeping `cursor.state` up to date at each checkpoint. */
async function reconcileWindow(run: CursorRun, cursor: { state: CursorState }, resumed: CursorState | undefined): Promise<ReconcileReport> {
  const { deps, options, runId, leaseUntil } = run;
  const keys: KeysCarry = {
    seed: cursor.state.seed,
    earlier: cursor.state.keysLost ? undefined : () => deps.store.readKeys(cursor.state.keyChunks),
    save: async (part) => {
      const chunks = await deps.store.saveKeys(cursor.state.windowId, runId, part, Math.floor(deps.now() / 1000) + KEY_CHUNK_SECONDS);
      cursor.state = { ...cursor.state, keyChunks: [...cursor.state.keyChunks, ...chunks] };
    },
  };
  try {
    return await reconcile(deps, {
      fromMs: cursor.state.fromMs,
      toMs: cursor.state.toMs,
      budgetMs: options.budgetMs,
      stuckAfterMs: options.stuckAfterMs,
      maxReenqueue: options.maxReenqueue,
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      ...(resumed === undefined ? {} : { start: resumed.position }),
      checkpoint: async (position) => {
        const next = { ...cursor.state, position };
        if (!checkpointDue(run)) return true;
        if (!(await deps.store.saveCursor(runId, next, leaseUntil))) return false;
        cursor.state = next;
        run.savedAt = deps.now();
        return true;
      },
      keys,
    });
  } catch (err) {
    // Let the next run go on from the last checkpoint at once, not after the lease.
    await deps.store.releaseCursor(runId, cursor.state);
    throw err;
  }
}

/** Releases the cursor at where the run stopped, or done (after the sweep), and gives up an effects check stuck run after run. */
async function finish(run: CursorRun, cursor: CursorState, resumed: CursorState | undefined, report: ReconcileReport): Promise<ReconcileReport> {
  const stuckInEffects = resumed?.position.phase === 'effects' && report.stoppedAt?.phase === 'effects';
  const effectsTries = stuckInEffects ? cursor.effectsTries + 1 : 0;
  const givenUp = effectsTries >= MAX_EFFECTS_TRIES;
  const position: ReconcilePosition = givenUp ? { phase: 'done' } : (report.stoppedAt ?? { phase: 'done' });
  // A window left unfinished keeps the rest of the budget, none: the sweep waits for a run that finishes one.
  const swept = position.phase === 'done' ? await sweepRest(run, { ...cursor, position, effectsTries }) : { cursor: { ...cursor, position, effectsTries } };
  // The run's report rides on the release it writes anyway: the console's overview reads it, at no request more.
  const released = await run.deps.store.releaseCursor(run.runId, { ...swept.cursor, lastRun: lastRunOf(report, run.deps.now()) });
  const cursorInfo = { runs: cursor.runs, resumed: resumed !== undefined, ...(released ? {} : { lost: true as const }) };
  const withSweep = swept.sweep === undefined ? {} : { sweep: swept.sweep, durationMs: run.deps.now() - run.startedAt };
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

/** A run's report as the cursor keeps it (the console's overview shows it). */
export function lastRunOf(report: ReconcileReport, endedAt: number): LastRunReport {
  return { startedAt: report.startedAt, endedAt, counts: { ...report.counts }, stoppedEarly: report.stoppedEarly };
}

/** The sweep, once the window needs nothing more of this run: what is left of the budget, its position on the cursor at each checkpoint. */
async function sweepRest(run: CursorRun, base: CursorState): Promise<{ cursor: CursorState; sweep?: SweepReport }> {
  const { deps, options, runId, leaseUntil, startedAt } = run;
  if (options.sweep === undefined || deps.expiry === undefined) return { cursor: base };
  let current = base;
  const { position, report } = await sweepExpired(deps.expiry, base.sweep, options.sweep, {
    now: deps.now,
    overBudget: () => deps.now() - startedAt >= options.budgetMs,
    checkpoint: async (sweep) => {
      if (!checkpointDue(run)) return true;
      if (!(await deps.store.saveCursor(runId, { ...current, sweep }, leaseUntil))) return false;
      current = { ...current, sweep };
      run.savedAt = deps.now();
      return true;
    },
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  return { cursor: { ...base, sweep: position }, sweep: report };
}
