/** `retryproof routes list | pause <route> | resume <route>`. */
import { createRouteControl } from '../../lambdas/routes/route-control.ts';
import type { RouteControl } from '../../lambdas/routes/route-control.ts';
import type { RouteState } from '../../lambdas/ports/route-state-store.ts';
import type { Command, CommandContext } from '../command.ts';
import { queueDepths } from '../operations/queue-depths.ts';
import type { QueueDepth } from '../operations/queue-depths.ts';
import { clip, formatTime, table } from '../output.ts';
import { operatorOptionsOf, unknownRouteError } from '../target.ts';

async function control(ctx: CommandContext): Promise<RouteControl> {
  return createRouteControl(operatorOptionsOf(await ctx.target(), ctx.now));
}

/** A route the stack does not have is a mistyped argument: a usage error, as in `inspect`. */
async function known(ctx: CommandContext, route: string): Promise<void> {
  const target = await ctx.target();
  if (!target.routes.includes(route)) throw unknownRouteError(target, route);
}

/** The widest line `routes list` prints in its table: a pause's reason is cut to fit (--json holds it whole). */
export const ROUTES_TABLE_COLUMNS = 100;
/** A reason (or a queue's routes) is never cut shorter than this, however wide the other columns. */
const LEAST_REASON = 24;

/** The routes' table: the reason last, cut with an ellipsis so that a line fits ROUTES_TABLE_COLUMNS. */
export function routesTable(rows: readonly (RouteState & { readonly queueKind: 'own' | 'shared' })[]): string {
  const cells = rows.map((s) => [
    s.route,
    s.state,
    s.state === 'paused' ? formatTime(s.pausedAt) : formatTime(s.resumedAt),
    s.state === 'paused' ? (s.pausedBy ?? '') : '',
    s.queueKind,
  ]);
  const columns = ['route', 'state', 'since', 'by', 'queue', 'reason'];
  const before = columns.slice(0, -1).reduce((sum, c, i) => sum + Math.max(c.length, ...cells.map((r) => (r[i] ?? '').length)) + 2, 0);
  const room = Math.max(LEAST_REASON, ROUTES_TABLE_COLUMNS - before);
  return table(columns, rows.map((s, i) => [...(cells[i] ?? []), s.state === 'paused' ? clip(s.reason ?? '', room) : '']));
}

/** The queues' depths: the routes each carries last, cut with an ellipsis so that a line fits ROUTES_TABLE_COLUMNS. */
export function depthsTable(depths: readonly QueueDepth[]): string {
  const cells = depths.map((d) => [d.queue, String(d.visible), String(d.inFlight), String(d.delayed)]);
  const columns = ['queue', 'visible', 'in flight', 'delayed', 'carries'];
  const before = columns.slice(0, -1).reduce((sum, c, i) => sum + Math.max(c.length, ...cells.map((r) => (r[i] ?? '').length)) + 2, 0);
  const room = Math.max(LEAST_REASON, ROUTES_TABLE_COLUMNS - before);
  const carries = (d: QueueDepth): string =>
    d.kind === 'dlq' ? 'dead letters (DLQ)' : d.kind === 'route' ? `${d.routes.join(', ')} (own queue)` : d.routes.length === 0 ? '(no route)' : d.routes.join(', ');
  return table(columns, depths.map((d, i) => [...(cells[i] ?? []), clip(carries(d), room)]));
}

export const routesListCommand: Command = {
  name: 'routes list',
  summary: 'each route, whether it is active or paused (and why), and the work waiting in each queue',
  usage: `retryproof routes list (--local [--region R] | --stack NAME) [--json]

Lists each route's state and queue (a pause's reason cut to fit ${ROUTES_TABLE_COLUMNS} columns; --json holds it whole), then the depth of every queue: the shared work queue,
each route's own queue (a route with rateLimit, concurrency or ownQueue), and the one DLQ.
Visible waits to run, in flight is running (or held), delayed is rate-limited work waiting
for its wake-up. Locally, --region R shows R's queues (default: the first Region's).

JSON: [{"route", "state": "active" | "paused", "reason"?, "key"?, "pausedAt"?, "pausedBy"?, "resumedAt"?, "repeats"?, "threshold"?, "whatNow"?,
        "queue": {"queue", "kind": "shared" | "route", "visible", "inFlight", "delayed"}}]`,
  options: {},
  args: [],
  async run(ctx) {
    // The states first: a role that cannot read the table is told so before anything else.
    const states = await (await control(ctx)).list();
    const depths = await queueDepths(await ctx.target());
    const queueOf = (route: string) => depths.find((d) => d.kind !== 'dlq' && d.routes.includes(route));
    if (ctx.json) {
      const rows = states.map((s) => {
        const q = queueOf(s.route);
        return q === undefined ? s : { ...s, queue: { queue: q.queue, kind: q.kind, visible: q.visible, inFlight: q.inFlight, delayed: q.delayed } };
      });
      ctx.print(`${JSON.stringify(rows, null, 2)}\n`);
      return 0;
    }
    ctx.print(`${routesTable(states.map((s) => ({ ...s, queueKind: queueOf(s.route)?.kind === 'route' ? 'own' : 'shared' })))}\n\n`);
    ctx.print(`${depthsTable(depths)}\n`);
    // The breaker's own word on what to do, kept with the pause: the alarm points here.
    for (const s of states) if (s.state === 'paused' && s.whatNow !== undefined) ctx.print(`${s.route}: ${s.whatNow}\n`);
    return 0;
  },
};

export const routesPauseCommand: Command = {
  name: 'routes pause',
  summary: 'pause a route: deliveries are still accepted, their work is parked',
  usage: `retryproof routes pause <route> [--reason TEXT] (--local | --stack NAME) [--json]

JSON: {"route", "paused": true | false}  (false: it was paused already)`,
  options: { reason: { type: 'string' } },
  args: ['route'],
  async run(ctx, { values, positionals }) {
    const route = positionals[0] ?? '';
    await known(ctx, route);
    const reason = typeof values.reason === 'string' && values.reason !== '' ? values.reason : undefined;
    const paused = await (await control(ctx)).pause(route, reason);
    ctx.print(ctx.json ? `${JSON.stringify({ route, paused })}\n` : paused ? `route ${route} paused\n` : `route ${route} was already paused\n`);
    return 0;
  },
};

export const routesResumeCommand: Command = {
  name: 'routes resume',
  summary: "resume a route and re-enqueue its parked work",
  usage: `retryproof routes resume <route> (--local [--region R] | --stack NAME) [--json]

Marks the route active, then re-enqueues every parked record of it (found with a Query on
the sparse parked index). Each runs exactly once; running resume twice is harmless.
Locally the parked work goes onto the --region R's queue (default: the first Region's);
the route's state is every Region's.

JSON: {"route", "resumed": true | false, "reenqueued": N}`,
  options: {},
  args: ['route'],
  async run(ctx, { positionals }) {
    const route = positionals[0] ?? '';
    await known(ctx, route);
    const result = await (await control(ctx)).resume(route, (n) => {
      ctx.progress(`resume ${route}: ${n} parked record${n === 1 ? '' : 's'} re-enqueued`);
    });
    if (ctx.json) ctx.print(`${JSON.stringify({ route, ...result })}\n`);
    else {
      ctx.print(
        `${result.resumed ? `route ${route} resumed` : `route ${route} was not paused`}; ` +
          `${result.reenqueued} parked record${result.reenqueued === 1 ? '' : 's'} re-enqueued\n`,
      );
    }
    return 0;
  },
};
