import { EXECUTION_OUTCOME } from '../execution-report.ts';
import { entityOf } from '../entity-line.ts';
import type { Gate } from '../message-context.ts';
import { blockedBy } from '../reports.ts';
import type { EntityLines } from './entity-turn.ts';

/**
 * A paused route keeps its work parked, not run, until it is resumed; on an ordered route the
 * record keeps its place as long (docs/architecture.md#a-pause-keeps-the-line). Routes of an
 * executor that knows no pauses never enter it.
 */
export function paused(isPaused: (route: string) => Promise<boolean>, lines: EntityLines | undefined): Gate {
  return async (ctx) => {
    if (!(await isPaused(ctx.work.route))) return undefined;
    const { executor, route, body, ref } = ctx;
    const nowMs = executor.now();
    const lineEntity = lines === undefined ? undefined : entityOf(route.name, lines.source, body.bytes);
    const parked = await executor.store.park({ ...ref, nowMs, ttlSeconds: route.ttlSeconds, payload: body.kept, fingerprint: body.fingerprint, ...(lineEntity === undefined ? {} : { lineEntity }) });
    if (parked.kind === 'parked' || parked.kind === 'already-parked') {
      if (lines !== undefined && lineEntity !== undefined) await lines.order.keep({ ...ref, entity: lineEntity }, nowMs, Math.floor(nowMs / 1000) + route.ttlSeconds);
      return { ...ctx.about, outcome: EXECUTION_OUTCOME.parked, ack: true };
    }
    // Resumed meanwhile: the park refused, and the work runs as usual.
    return parked.kind === 'route-active' ? undefined : blockedBy(ctx, parked);
  };
}
