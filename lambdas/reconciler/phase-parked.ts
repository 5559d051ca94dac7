/**
 * Phase 1 of a run: parked work of any age, through the sparse `parked` index. On an active
 * route it is re-sent (sent first, then unparked, so a failed send leaves it findable); on a
 * paused one it is kept from expiring and reported. why: docs/architecture.md#reconciliation
 */
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { EventRecord } from '../domain/event-record.ts';
import type { ReconcilePosition } from '../ports/reconciler-store.ts';
import { sweepIndex } from './index-sweep.ts';
import type { ReconcileRun } from './reconcile-run.ts';
import { messageFor, trySend } from './resend.ts';

/** A parked record whose expiry comes within this much is given a whole TTL more. */
const PARKED_KEEP_AHEAD_SECONDS = 7 * 86_400;

/** Sweeps every route's parked records; undefined once done, or where it stopped. */
export function parkedPhase(run: ReconcileRun): Promise<ReconcilePosition | undefined> {
  const routeStates = new Map<string, Promise<boolean>>();
  const routeIsActive = (route: string): Promise<boolean> => {
    const store = run.deps.routeState;
    if (store === undefined) return Promise.resolve(false);
    let active = routeStates.get(route);
    if (active === undefined) {
      active = store.get(route).then((s) => s.state === 'active');
      routeStates.set(route, active);
    }
    return active;
  };
  const keepUntilSeconds = Math.floor(run.now / 1000) + PARKED_KEEP_AHEAD_SECONDS;
  return sweepIndex(
    run,
    'parked',
    (route, after) => run.deps.store.listParked(route, after),
    async (route, record) => parkedRecord(run, route, record, await routeIsActive(route.name), keepUntilSeconds),
  );
}

async function parkedRecord(run: ReconcileRun, route: ResolvedRoute, record: EventRecord, active: boolean, keepUntilSeconds: number): Promise<void> {
  const { deps, counts } = run;
  if (active && (await waitsItsTurn(run, route, record, keepUntilSeconds))) return;
  if (active && counts.reenqueued < run.options.maxReenqueue) {
    // park keeps the payload: a parked record can always be sent from the table.
    const message = messageFor(run, record);
    if (message === undefined || !(await trySend(run, record, message))) return;
    if (await deps.store.unpark(record, deps.now())) {
      counts.reenqueued++;
      await run.correction(record, 'unparked', { reason: 'parked on a route that is active again' });
    }
    return;
  }
  if (record.expiresAt < keepUntilSeconds) {
    // No send keeps a paused route's body object alive, so it is renewed first (domain/body-object.ts); a gone one stays gone.
    if (record.bodyObject !== undefined && deps.bodies !== undefined) await deps.bodies.renew(record.bodyObject);
    // Its place in its line first, then the record: a place never ends before its record.
    if (record.lineEntity !== undefined && deps.order !== undefined) {
      await deps.order.keep({ route: route.name, entity: record.lineEntity, key: record.key, receivedAt: record.receivedAt }, run.now, Math.floor(run.now / 1000) + route.ttlSeconds);
    }
    await deps.store.keepParked(record, run.now, route.ttlSeconds, keepUntilSeconds);
  }
  counts.parked++;
  run.flag(record, 'parked', active ? 'left for the next run: the per-run re-enqueue bound was reached' : undefined);
}

/**
 * A record waiting in its entity's line is not lost unless its turn came and its wake-up did
 * not (the worker that moved the line died first): true when it still waits, kept with its place.
 * False too when it waits for no turn, or the deployment keeps no line.
 */
async function waitsItsTurn(run: ReconcileRun, route: ResolvedRoute, record: EventRecord, keepUntilSeconds: number): Promise<boolean> {
  const { deps, now } = run;
  const { order } = deps;
  if (record.waitingTurn === undefined || record.lineEntity === undefined || order === undefined) return false;
  const ref = { route: route.name, entity: record.lineEntity, key: record.key, receivedAt: record.receivedAt };
  // turn() also moves the line past a head whose worker died between its completion and the move.
  const turn = await order.turn(ref, now, record.expiresAt);
  if (turn.kind !== 'wait') return false;
  if (record.expiresAt < keepUntilSeconds) {
    if (record.bodyObject !== undefined && deps.bodies !== undefined) await deps.bodies.renew(record.bodyObject);
    await deps.store.keepParked(record, now, route.ttlSeconds, keepUntilSeconds);
    await order.markWaiting(ref, turn.place, Math.floor(now / 1000) + route.ttlSeconds);
  }
  run.counts.parked++;
  if (turn.head.status === RECORD_STATUS.failed) {
    run.flag(record, 'line-blocked', `waits behind ${turn.head.key} (place ${turn.head.place}), FAILED: redrive it, or skip it with retryproof order skip`);
  }
  return true;
}
