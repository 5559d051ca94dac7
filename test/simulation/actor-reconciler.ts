/** The reconciler actor: scheduled runs of the real reconciler, through its cursor, on the run's clock. */
import { defaultWindow, notDueGapMs, sweepOptionsOf } from '../../lambdas/reconciler/create-reconciler.ts';
import { reconcileScheduled } from '../../lambdas/reconciler/reconcile-cursor.ts';
import { DEPLOYED_BUDGET_MS } from '../../lambdas/reconciler/reconciler-budget.ts';
import { DynamoDbExpirySweepStore } from '../../lambdas/store/dynamodb-expiry-sweep-store.ts';
import { DynamoDbReconcilerStore } from '../../lambdas/store/dynamodb-reconciler-store.ts';
import { perRegion } from './regions.ts';
import { DAY, HOUR, RECONCILER_GAP_MS, RECONCILER_TIMEOUT_MS } from './sim-constants.ts';
import { traced } from './sim-util.ts';
import { drainActors, stepActor, wakeWoken } from './stepping.ts';
import { replicateDue } from './world-dynamo.ts';
import { orderOf, routeStateOf } from './world-ports.ts';
import type { World } from './world.ts';

/** The reconciler's stores, observed. */
export function buildReconciler(w: World): void {
  // The reconciler's store, observed: a resend it wins stores a 2xx answer on the record.
  const realReconcilerStore = traced(perRegion(w, (table) => new DynamoDbReconcilerStore(w.clientOf.reconciler, table, { timeShards: w.shape.timeShards })), 'reconcilerStore', w.trace);
  w.reconcilerStore = w.sched.gate(realReconcilerStore, 'reconcilerStore');
  // With several Regions on one MRSC table (no TTL) the scheduled runs sweep expired items, and
  // a run that another Region's finished a moment ago does nothing (reconcile-cursor.ts).
  const sweeping = w.regionCount > 1 && !w.eventual;
  w.expiryStore = sweeping ? w.sched.gate(traced(perRegion(w, (table) => new DynamoDbExpirySweepStore(w.clientOf.reconciler, table)), 'expiry', w.trace), 'expiry') : undefined;
  w.sweepOptions = sweeping ? sweepOptionsOf(w.config, w.startMs - DAY) : undefined;
  w.reconcilerRouteState = routeStateOf(w, w.clientOf.reconciler);
}

/**
 * One scheduled reconciler run, as the deployed function makes it (reconciler/lambda.ts):
 * through the cursor (reconcile-cursor.ts), with the deployed budget. It reconciles the
 * window an earlier run left unfinished (it died, threw, or ran out of budget) from where
 * that run stopped, else the usual 24 hours, starting no later than the end of the last
 * finished window. Runs here come hours or days apart, not hourly: a run that failed inside
 * a record's only window hands it on through the cursor, or the record is never looked at
 * (seed 634: the one run in k9's 24 h failed, and the next came 24.04 h after its receipt).
 * `toEnd`: run it to its end now, as an hourly run between two clock jumps would.
 * Answers whether the run left its window unfinished (it threw, died, ran out of budget,
 * or found the cursor held), when run to its end.
 */
export async function runReconciler(w: World, toEnd = false, region = nextReconcilerRegion(w)): Promise<boolean> {
  await wakeWoken(w);
  if (w.eventual) await replicateDue(w);
  w.stats.reconcilerRuns++;
  w.lastReconcilerRunAt = w.nowMs;
  let finished = false;
  const actor = await w.sched.spawn('reconciler', 'reconciler', async (self) => {
    // The deployed window by its own clock, clipped: nothing of the run was stamped before its start, less the skew.
    const window = defaultWindow(w.config, w.now());
    const report = await reconcileScheduled(
      {
        store: w.reconcilerStore,
        ledgers: new Map([['simpay', w.ledger]]),
        queue: w.gatedQueue,
        routes: w.routes,
        routeState: w.reconcilerRouteState,
        bodies: w.bodies,
        order: orderOf(w, w.clientOf.reconciler),
        now: w.now,
        // The cursor's holder: of the seed, not a random UUID (a replay holds it under the same name).
        runId: `sched_sim${w.seed}_${self.id}`,
        ...(w.expiryStore === undefined ? {} : { expiry: w.expiryStore }),
      },
      {
        current: { fromMs: Math.max(w.startMs - w.skewBoundMs - 1000, window.fromMs), toMs: window.toMs },
        ...(w.sweepOptions === undefined ? {} : { sweep: w.sweepOptions, minGapMs: notDueGapMs(w.config) }),
        budgetMs: DEPLOYED_BUDGET_MS,
        stuckAfterMs: w.config.reconciliation.stuckAfterSeconds * 1000,
        maxReenqueue: w.config.reconciliation.maxReenqueuePerRun,
      },
    );
    finished = report.skipped === undefined && !report.stoppedEarly;
    if (report.skipped !== undefined) w.stats.reconcilerSkips++;
    if (report.notDue !== undefined) w.stats.reconcilerNotDue++;
    w.stats.sweptItems += report.sweep?.swept ?? 0;
    if (report.cursor?.resumed === true) w.stats.reconcilerResumes++;
    w.trace?.(`reconciler: window ${report.window.from} .. ${report.window.to}${report.cursor?.resumed === true ? ' (resumed)' : ''}${report.skipped === undefined ? '' : ' skipped: the cursor is held'}${report.stoppedEarly ? ' stopped early' : ''}`);
    if (report.sweep !== undefined || report.notDue !== undefined) w.trace?.(`  sweep ${JSON.stringify(report.sweep ?? null)}${report.notDue === undefined ? '' : ' (window not due: another run finished it a moment ago)'}`);
    w.trace?.(`  counts ${JSON.stringify(report.counts)}; reversals ${report.reversals.map((r) => `${r.key}:${r.entryId}`).join(', ') || 'none'}; findings ${report.needsAttention.map((f) => `${f.key} ${f.finding}`).join(', ') || 'none'}`);
  }, { deadlineMs: w.nowMs + RECONCILER_TIMEOUT_MS, region });
  while (toEnd && actor.state === 'parked') await stepActor(w, actor);
  return !finished;
}

/**
 * The clock moved on to `target` with the reconciler's schedule kept: a run at least every
 * RECONCILER_GAP_MS of the way (the deployed schedule runs hourly; every 12 hours here, each
 * over its 24 h window, as the leaps do). A drain that followed a copy's growing hand-backs
 * leapt a day with no run, and a record whose ingest died between its resend claim and its
 * send left the window unseen (seed 99): no hourly schedule lets that happen.
 */
export async function leapTo(w: World, target: number): Promise<void> {
  for (let i = 0; i < 400 && target - w.lastReconcilerRunAt > RECONCILER_GAP_MS; i++) {
    w.setNow(Math.max(w.nowMs, w.lastReconcilerRunAt + RECONCILER_GAP_MS));
    await runReconciler(w, true);
    await drainActors(w);
  }
  w.setNow(target);
}

/** Each Region's schedule runs its own reconciler: runs take turns between the Regions. */
export function nextReconcilerRegion(w: World): number {
  const region = w.reconcilerTurn % w.regionCount;
  w.reconcilerTurn++;
  return region;
}

/**
 * The reconciler as its hourly schedule runs it through a quiet stretch: a run, then, while
 * its window is unfinished, the next hourly runs (at most two days of them). A tick here
 * stands for days of hourly runs; one run alone would leave a window the budget cannot
 * finish in one run (slow answers, a long window after days without a finished one) to the
 * next tick, days on, and the parked sweep of the runs in between would never happen: the
 * parked sweep keeps a paused route's records from expiring only when their expiry comes
 * within 7 days (seed 247: a window resumed every 6 days for a month, and a parked record
 * on a paused route expired).
 */
export async function runReconcilerHourly(w: World): Promise<void> {
  for (let hour = 0; hour < 48 && (await runReconciler(w, true)); hour++) w.setNow(w.nowMs + HOUR);
  // Every Region's schedule runs within the hour: the next Region's run, minutes after the one
  // that finished the window, finds it not due and spends its budget on the expiry sweep.
  if (w.regionCount > 1) {
    w.setNow(w.nowMs + 20 * 60_000);
    await runReconciler(w, true);
  }
}

/** A scheduled run in a Region, stepped like any actor. */
export async function reconcileOp(w: World, a: number): Promise<void> {
  await runReconciler(w, false, w.regionAt(a));
}
