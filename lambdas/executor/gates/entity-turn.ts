import type { EntitySource } from '../../domain/entity-order.ts';
import type { EntityOrder, LineRef } from '../../ports/entity-order.ts';
import { entityOf } from '../entity-line.ts';
import { EXECUTION_OUTCOME } from '../execution-report.ts';
import type { ExecutionReport } from '../execution-report.ts';
import type { Gate, MessageContext } from '../message-context.ts';
import { blockedBy } from '../reports.ts';
import { wakeWaiter } from '../wake-waiter.ts';

/** The lines of an ordered route: the executor's entity order, and how the route reads a body's entity. */
export interface EntityLines {
  readonly order: EntityOrder;
  readonly source: EntitySource;
}

/**
 * A record of a route ordered per entity runs only at its turn; before it, it waits parked in the
 * line, and the worker that completes the record ahead wakes it
 * (docs/architecture.md#large-bodies-and-ordering-per-entity). Unordered routes never enter it.
 */
export function entityTurn(lines: EntityLines): Gate {
  return (ctx) => {
    const entity = entityOf(ctx.route.name, lines.source, ctx.body.bytes);
    return entity === undefined ? undefined : takeTurn(ctx, lines.order, { ...ctx.ref, entity });
  };
}

async function takeTurn(ctx: MessageContext, order: EntityOrder, ref: LineRef): Promise<ExecutionReport | undefined> {
  const { executor, route, body } = ctx;
  // A place lives as long as its record may run: a whole TTL from this look at the line.
  const placeExpiresAt = Math.floor(executor.now() / 1000) + route.ttlSeconds;
  let turn = await order.turn(ref, executor.now(), placeExpiresAt);
  if (turn.kind === 'wait') {
    // Park and mark before the second look at the line: the completer moves the cursor before it reads the mark, so no wake-up is lost.
    const nowMs = executor.now();
    const parked = await executor.store.parkInLine({ ...ref, nowMs, ttlSeconds: route.ttlSeconds, payload: body.kept, fingerprint: body.fingerprint, place: turn.place });
    if (parked.kind === 'route-active') return { ...ctx.about, outcome: EXECUTION_OUTCOME.locked, ack: false, visibilitySeconds: 1 };
    if (parked.kind !== 'parked' && parked.kind !== 'already-parked') return blockedBy(ctx, parked);
    await order.markWaiting(ref, turn.place, Math.floor(nowMs / 1000) + route.ttlSeconds);
    turn = await order.turn(ref, executor.now(), placeExpiresAt);
    // Its turn came meanwhile: this message runs it now (the lease takes a PARKED record).
    if (turn.kind === 'wait') return { ...ctx.about, outcome: EXECUTION_OUTCOME.waitingTurn, ack: true };
  }
  if (turn.kind === 'turn') ctx.line = { order, ref, place: turn.place };
  else if (turn.waiter !== undefined) await wakeWaiter(executor, ctx.work.route, turn.waiter);
  return undefined;
}
