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
 */
import { randomUUID } from 'node:crypto';
import { CLOCK_SKEW_SECONDS } from '../config/route-config.ts';
import type { CursorState, ReconcilePosition } from '../ports/reconciler-store.ts';
import { reconcile } from './reconcile.ts';
import type { ReconcileDeps, ReconcileOptions, ReconcileReport } from './reconcile.ts';
import { REPORT_RESERVE_MS } from './reconciler-budget.ts';

export interface ScheduledRunOptions extends Pick<ReconcileOptions, 'budgetMs' | 'stuckAfterMs' | 'maxReenqueue' | 'onProgress'> {
  /** The window as the schedule sees it now: [now - windowHours, now - settle]. */
  readonly current: { readonly fromMs: number; readonly toMs: number };
}

/** A lease written by another run is over only this long after its end, by our clock. */
const TAKEOVER_MARGIN_MS = 2 * CLOCK_SKEW_SECONDS * 1000;

/** The report of a run that found the window held by another: it did nothing. */
function skippedReport(runId: string, startedAt: number, window: { fromMs: number; toMs: number }, holder: string, leaseUntil: number): ReconcileReport {
  return {
    runId,
    window: { ...window, from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString() },
    startedAt,
    durationMs: 0,
    counts: { scanned: 0, reenqueued: 0, reversed: 0, missing: 0, orphans: 0, failed: 0, parked: 0, needsAttention: 0 },
    needsAttention: [],
    reversals: [],
    stoppedEarly: false,
    skipped: { holder, leaseUntil },
  };
}

/** One scheduled run: the cursor's unfinished window from where it stopped, or the current one. */
export async function reconcileScheduled(deps: ReconcileDeps & { readonly runId?: string }, options: ScheduledRunOptions): Promise<ReconcileReport> {
  const runId = deps.runId ?? `sched_${randomUUID()}`;
  const startedAt = deps.now();
  const leaseUntil = startedAt + options.budgetMs + REPORT_RESERVE_MS;
  const take = await deps.store.takeCursor(runId, leaseUntil, startedAt - TAKEOVER_MARGIN_MS);
  if (!take.taken) return skippedReport(runId, startedAt, options.current, take.holder, take.leaseUntil);

  const saved = take.cursor;
  const unfinished = saved !== undefined && saved.position.phase !== 'done';
  const window = unfinished
    ? { fromMs: saved.fromMs, toMs: saved.toMs }
    : { fromMs: Math.min(options.current.fromMs, saved?.toMs ?? options.current.fromMs), toMs: options.current.toMs };
  const runs = (unfinished ? saved.runs : 0) + 1;
  const at = (position: ReconcilePosition): CursorState => ({ ...window, position, runs });
  let lastSaved: ReconcilePosition = unfinished ? saved.position : { phase: 'parked', route: '' };
  // This run's number is on the cursor before any work: one that dies still counts as a run.
  await deps.store.saveCursor(runId, at(lastSaved), leaseUntil);

  let report: ReconcileReport;
  try {
    report = await reconcile(deps, {
      ...window,
      budgetMs: options.budgetMs,
      stuckAfterMs: options.stuckAfterMs,
      maxReenqueue: options.maxReenqueue,
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      ...(unfinished ? { start: saved.position } : {}),
      checkpoint: async (position) => {
        if (!(await deps.store.saveCursor(runId, at(position), leaseUntil))) return false;
        lastSaved = position;
        return true;
      },
    });
  } catch (err) {
    // Let the next run go on from the last checkpoint at once, not after the lease.
    await deps.store.releaseCursor(runId, at(lastSaved));
    throw err;
  }
  const released = await deps.store.releaseCursor(runId, at(report.stoppedAt ?? { phase: 'done' }));
  return { ...report, cursor: { runs, resumed: unfinished, ...(released ? {} : { lost: true }) } };
}
