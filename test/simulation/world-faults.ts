/** The operations the world makes: steps and deaths of any actor, time moving, and outages of SQS and DynamoDB. */
import { COMPLETION_MARGIN_SECONDS } from '../../lambdas/config/route-config.ts';
import { unseenReceive } from './actor-executor.ts';
import { runReconciler } from './actor-reconciler.ts';
import { BROWNOUT } from './run-shape.ts';
import { DAY, HOUR } from './sim-constants.ts';
import { pick } from './sim-util.ts';
import { finishMost, killActor, stepActor } from './stepping.ts';
import { workQueuesOf } from './world-queues.ts';
import { quietLeap, ttlSweep } from './world-time.ts';
import type { World } from './world.ts';

/** Any parked actor takes a step. */
export async function stepOp(w: World, a: number, b: number): Promise<void> {
  const actor = pick(w.sched.parked(), a);
  if (actor !== undefined) await stepActor(w, actor, b);
}

export function crashOp(w: World, a: number): void {
  // Any parked actor but an ingest inside its mark: a function that dies in the one round
  // trip between its mark and its answer has marked an answer it could have given, and
  // the design counts it so (test/breaker/brownout.test.ts; docs/architecture.md, "When
  // it trips"). Its Lambda timeout cannot land there: the mark ends 1 s before it.
  const actor = pick(w.sched.parked().filter((p) => p.meta.marking !== true), a);
  if (actor !== undefined) killActor(w, actor, 'crash');
}

export async function tickOp(w: World, a: number): Promise<void> {
  await finishMost(w);
  w.advance(200 + a * 3_000);
}

export async function waitOp(w: World, a: number): Promise<void> {
  await finishMost(w);
  w.advance(10_000 + a * 200_000);
}

export async function jumpOp(w: World, a: number): Promise<void> {
  await finishMost(w);
  w.stats.clockJumps++;
  w.advance(20 * 60_000 + a * 70 * 60_000);
}

export function stallOp(w: World, a: number): void {
  // Every parked invocation stalls (a long GC pause, a slow network) past the lease it may
  // hold, but not past its Lambda timeout, which is the longest lease plus the completion
  // margin: nothing finishes first. A stalled worker then wakes after another may have
  // taken its record; only the lease token keeps its late writes out.
  w.stats.stalls++;
  w.advance(w.stallLeaseMs + a * (COMPLETION_MARGIN_SECONDS * 1000 - 1));
}

export async function leapOp(w: World, a: number): Promise<void> {
  await finishMost(w);
  w.stats.clockJumps++;
  // Outages and brownouts last hours, not the days a leap spans: they are over by its
  // first half-day (quietLeap says why).
  w.sqsDown = false;
  w.isolated = undefined;
  if (w.dynamoPlan === BROWNOUT) w.dynamoPlan = w.shape.dynamo;
  if (w.shape.long) {
    // Days to weeks in a run of weeks (see quietLeap).
    await quietLeap(w, (2 + a * 12) * DAY);
    return;
  }
  // A day or two: the hourly reconciler runs meanwhile (every 12 hours here, each over 24).
  const halfDays = 2 + Math.floor(a * 3);
  for (let i = 0; i < halfDays; i++) {
    w.advance(12 * HOUR);
    await runReconciler(w, true);
  }
}

export async function ttlOp(w: World): Promise<void> {
  await ttlSweep(w);
}

export function isolateOp(w: World, a: number): void {
  // A Region is cut off from the others (its DynamoDB replica loses the quorum) for a
  // while, and comes back: its senders' copies meet 5xx answers and are sent again.
  if (w.regionCount === 1) return;
  if (w.isolated === undefined) {
    w.isolated = w.regionAt(a);
    w.stats.isolations++;
    w.trace?.(`Region ${w.isolated} is isolated`);
  } else {
    w.trace?.(`Region ${w.isolated} rejoins`);
    w.isolated = undefined;
  }
}

export function sqsOutageOp(w: World): void {
  w.sqsDown = !w.sqsDown;
  if (w.sqsDown) w.stats.outages++;
}

export function brownoutOp(w: World): void {
  w.dynamoPlan = w.dynamoPlan === BROWNOUT ? w.shape.dynamo : BROWNOUT;
}

export function sqsDuplicateOp(w: World, a: number, b: number): void {
  // At-least-once delivery: another stored copy of a message (in either queue) comes back.
  (a < 0.8 ? workQueuesOf(w, w.regionAt(b), a / 0.8)[0] : w.dlqs[w.regionAt(b)])?.duplicate({ random: w.sqsRandom });
}

export function unseenReceiveOp(w: World, _a: number, b: number): void {
  unseenReceive(w, w.regionAt(b));
}
