/**
 * Layer 3: reconcile a window. Re-enqueue stuck work, compare accepted work with the ledger,
 * reverse duplicate effects, and report everything a person must look at. Safe to run twice or
 * twice at once: every write is conditional and each reversal id is derived from the entry it
 * reverses. why: docs/architecture.md#reconciliation
 *
 * The phases, in order, one module each. A run may start at any of them, and stops at a clean
 * position between two records when its time budget runs out:
 *   parked    phase-parked.ts    every PARKED record of each route, whatever its age
 *   stranded  phase-stranded.ts  records an earlier run could not re-send, whatever their age
 *   window    phase-window.ts    every record received in [fromMs, toMs)
 *   effects   phase-effects.ts   each ledger against the window
 *
 * The position (ReconcilePosition) names the phase, the route or the hour bucket and shard, and
 * the last record handled there, whose index keys are the next Query's ExclusiveStartKey.
 * `checkpoint` is told it after every page; a run that ends on its budget returns it as
 * `stoppedAt`, and the next run given it as `start` begins right after that record
 * (reconcile-cursor.ts keeps it between scheduled runs). A run that dies between two checkpoints
 * hands its last page on again, whose conditional writes (claimResend above all) refuse the
 * second attempt. why: docs/architecture.md#a-day-of-traffic-is-large
 */
import type { ReconcilePosition } from '../ports/reconciler-store.ts';
import { effectsPhase } from './phase-effects.ts';
import { parkedPhase } from './phase-parked.ts';
import { strandedPhase } from './phase-stranded.ts';
import { windowPhase } from './phase-window.ts';
import { ReconcileRun } from './reconcile-run.ts';
import type { ReconcileDeps, ReconcileOptions, ReconcileReport } from './reconcile-types.ts';

export type { ReconcilePosition } from '../ports/reconciler-store.ts';
export type { Finding, KeysCarry, ReconcileDeps, ReconcileOptions, ReconcileReport } from './reconcile-types.ts';

/** Runs the phases from options.start (else the first), each until done or stopped, and reports. */
export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions): Promise<ReconcileReport> {
  const run = new ReconcileRun(deps, options);
  // Each phase returns where it stopped (its budget ran out, or the cursor was lost), or undefined once done.
  let stoppedAt: ReconcilePosition | undefined;
  if (run.reaches('parked')) stoppedAt = await parkedPhase(run);
  if (stoppedAt === undefined && run.reaches('stranded')) stoppedAt = await strandedPhase(run);
  if (stoppedAt === undefined && run.reaches('window')) stoppedAt = await windowPhase(run);
  if (stoppedAt === undefined && run.reaches('effects')) stoppedAt = await effectsPhase(run);
  // Stopped inside the window, or inside the effects check after reading the whole window: the next run gets this run's keys.
  const { keys } = run;
  const handOn = (stoppedAt?.phase === 'window' && keys.ownPart) || (stoppedAt?.phase === 'effects' && keys.windowRemembered);
  if (handOn && options.keys !== undefined) await options.keys.save(keys.exportPart());
  return run.report(stoppedAt);
}
