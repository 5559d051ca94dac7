import { randomUUID } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { bodyObjectRenewAfterSeconds, longestTtlSeconds } from '../domain/body-object.ts';
import { entitySourceFor } from '../domain/entity-order.ts';
import { needsReplayMemory } from '../domain/idempotency-key.ts';
import { TAKEOVER_MARGIN_MS } from '../store/record-transitions.ts';
import type { Executor, ExecutorDeps } from './executor-deps.ts';
import { bodyMissing } from './gates/body-missing.ts';
import { deadLetterCopy } from './gates/dead-letter-copy.ts';
import { entityTurn } from './gates/entity-turn.ts';
import { paused } from './gates/paused.ts';
import { rateGate } from './gates/rate-gate.ts';
import { unreadable } from './gates/unreadable.ts';
import { unrunnable } from './gates/unrunnable.ts';
import type { Gate, Invocation } from './message-context.ts';
import { lease } from './phases/lease.ts';
import { run } from './phases/run.ts';
import { settle } from './phases/settle.ts';
import { StartLead } from './start-lead.ts';

/** The optional features gatesFor builds a route's gates from; a missing one is a gate left out. */
type Features = Pick<ExecutorDeps, 'isPaused' | 'order' | 'rateGate'> & { readonly startLead: StartLead };

/**
 * The order of an execution's reads and writes, for one route (undefined: a route that is not
 * configured, which stops at unrunnable). Each gate returns a report to stop the message or
 * nothing to let it pass; then come lease, run and settle. A feature the route or the executor
 * lacks is a gate left out, never an `if` on every message's way.
 */
export function gatesFor(route: ResolvedRoute | undefined, { isPaused, order, rateGate: gate, startLead }: Features): readonly Gate[] {
  const lines = route?.orderBy !== undefined && order !== undefined ? { order, source: entitySourceFor(route.orderBy) } : undefined;
  return gates(
    unreadable,
    bodyMissing,
    deadLetterCopy,
    unrunnable,
    isPaused !== undefined && paused(isPaused, lines),
    lines !== undefined && entityTurn(lines),
    route?.rateLimit !== undefined && gate !== undefined && rateGate(gate, route.rateLimit, startLead),
    lease,
    run(route !== undefined && needsReplayMemory(route.signature.scheme)),
    settle,
  );
}

function gates(...list: readonly (Gate | false)[]): Gate[] {
  return list.filter((gate) => gate !== false);
}

/** Applies the executor's defaults once and builds every route's gates: once per handler, at cold start. */
export function prepareExecutor(deps: ExecutorDeps): Executor {
  const features: Features = { isPaused: deps.isPaused, order: deps.order, rateGate: deps.rateGate, startLead: deps.startLead ?? new StartLead() };
  const routes = new Map(
    [...deps.routes].map(([name, config]) => [name, { config, action: deps.actions.get(config.action), gates: gatesFor(config, features) }] as const),
  );
  return {
    routes,
    unrouted: gatesFor(undefined, features),
    store: deps.store,
    workQueue: deps.workQueue,
    bodies: deps.bodies,
    maxReceiveCount: deps.maxReceiveCount,
    now: deps.now,
    takeoverMarginMs: deps.takeoverMarginMs ?? TAKEOVER_MARGIN_MS,
    sleep: deps.sleep ?? ((ms: number) => setTimeout(ms)),
    random: deps.random ?? Math.random,
    newId: deps.newId ?? randomUUID,
    renewAfterMs: bodyObjectRenewAfterSeconds(longestTtlSeconds(deps.routes.values())) * 1000,
  };
}

/** An invocation as ExecutorDeps describes it: unbounded when it gives no time left. */
export function invocationOf(deps: Pick<ExecutorDeps, 'remainingMs' | 'requestId'>): Invocation {
  return { remainingMs: deps.remainingMs ?? (() => Number.POSITIVE_INFINITY), ...(deps.requestId === undefined ? {} : { requestId: deps.requestId }) };
}
