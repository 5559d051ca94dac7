/**
 * Which actor makes each operation of a schedule, and the function that makes it. `world` is
 * the world itself: time, deaths, outages. An operation that does not apply to the state is
 * skipped, so a schedule shrinks by deleting operations.
 */
import { crashAfterPostOp, edgeOp, pollOp, slowLeaseOp } from './actor-executor.ts';
import { burstOp, deliverOp, duplicateOp, replayOp } from './actor-ingest.ts';
import { lateRedriveOp, pauseOp, redriveBulkOp, redriveCliOp, redriveConsoleOp, resumeOp } from './actor-operator.ts';
import { reconcileOp } from './actor-reconciler.ts';
import type { OpName } from './schedule.ts';
import {
  brownoutOp,
  crashOp,
  isolateOp,
  jumpOp,
  leapOp,
  sqsDuplicateOp,
  sqsOutageOp,
  stallOp,
  stepOp,
  tickOp,
  ttlOp,
  unseenReceiveOp,
  waitOp,
} from './world-faults.ts';
import type { World } from './world.ts';

export type ActorName = 'ingest' | 'executor' | 'reconciler' | 'operator' | 'world';

export interface Operation {
  readonly actor: ActorName;
  /** Makes the operation; `a` and `b` in [0, 1) pick among whatever the state offers. */
  readonly run: (w: World, a: number, b: number) => Promise<void> | void;
}

export const OPERATIONS: Readonly<Record<OpName, Operation>> = {
  deliver: { actor: 'ingest', run: deliverOp },
  duplicate: { actor: 'ingest', run: duplicateOp },
  burst: { actor: 'ingest', run: burstOp },
  replay: { actor: 'ingest', run: replayOp },
  poll: { actor: 'executor', run: pollOp },
  edge: { actor: 'executor', run: edgeOp },
  'slow-lease': { actor: 'executor', run: slowLeaseOp },
  'crash-after-post': { actor: 'executor', run: crashAfterPostOp },
  reconcile: { actor: 'reconciler', run: reconcileOp },
  pause: { actor: 'operator', run: pauseOp },
  resume: { actor: 'operator', run: resumeOp },
  'redrive-console': { actor: 'operator', run: redriveConsoleOp },
  'redrive-cli': { actor: 'operator', run: redriveCliOp },
  'redrive-bulk': { actor: 'operator', run: redriveBulkOp },
  'late-redrive': { actor: 'operator', run: lateRedriveOp },
  step: { actor: 'world', run: stepOp },
  crash: { actor: 'world', run: crashOp },
  tick: { actor: 'world', run: tickOp },
  wait: { actor: 'world', run: waitOp },
  jump: { actor: 'world', run: jumpOp },
  stall: { actor: 'world', run: stallOp },
  leap: { actor: 'world', run: leapOp },
  ttl: { actor: 'world', run: ttlOp },
  isolate: { actor: 'world', run: isolateOp },
  'sqs-outage': { actor: 'world', run: sqsOutageOp },
  'ddb-brownout': { actor: 'world', run: brownoutOp },
  'sqs-duplicate': { actor: 'world', run: sqsDuplicateOp },
  'unseen-receive': { actor: 'world', run: unseenReceiveOp },
};
