/** `retryproof routes list | pause <route> | resume <route>`. */
import { createRouteControl } from '../../lambdas/routes/route-control.ts';
import type { RouteControl } from '../../lambdas/routes/route-control.ts';
import type { Command, CommandContext } from '../command.ts';
import { formatTime, table } from '../output.ts';
import { operatorOptionsOf, unknownRouteError } from '../target.ts';

async function control(ctx: CommandContext): Promise<RouteControl> {
  return createRouteControl(operatorOptionsOf(await ctx.target(), ctx.now));
}

/** A route the stack does not have is a mistyped argument: a usage error, as in `inspect`. */
async function known(ctx: CommandContext, route: string): Promise<void> {
  const target = await ctx.target();
  if (!target.routes.includes(route)) throw unknownRouteError(target, route);
}

export const routesListCommand: Command = {
  name: 'routes list',
  summary: 'each route and whether it is active or paused (and why)',
  usage: `retryproof routes list (--local | --stack NAME) [--json]

JSON: [{"route", "state": "active" | "paused", "reason"?, "key"?, "pausedAt"?, "pausedBy"?, "resumedAt"?, "repeats"?, "threshold"?, "whatNow"?}]`,
  options: {},
  args: [],
  async run(ctx) {
    const states = await (await control(ctx)).list();
    if (ctx.json) {
      ctx.print(`${JSON.stringify(states, null, 2)}\n`);
      return 0;
    }
    ctx.print(
      `${table(
        ['route', 'state', 'since', 'by', 'reason'],
        states.map((s) => [
          s.route,
          s.state,
          s.state === 'paused' ? formatTime(s.pausedAt) : formatTime(s.resumedAt),
          s.state === 'paused' ? (s.pausedBy ?? '') : '',
          s.state === 'paused' ? (s.reason ?? '') : '',
        ]),
      )}\n`,
    );
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
