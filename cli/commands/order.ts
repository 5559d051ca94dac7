/** `retryproof order show <route> <entity>` and `order skip <route> <entity>`: the lines of routes ordered per entity. */
import { RECORD_STATUS } from '../../lambdas/domain/event-record.ts';
import { createLineControl, DEFAULT_LINE_LIMIT, LineSelectionError } from '../../lambdas/routes/line-control.ts';
import type { LineControl, LineShow, SkipOutcome } from '../../lambdas/routes/line-control.ts';
import { intFlag } from '../args.ts';
import type { Command, CommandContext } from '../command.ts';
import { CliError, UsageError } from '../errors.ts';
import { formatTime, table } from '../output.ts';
import { operatorOptionsOf, unknownRouteError } from '../target.ts';

/** The most places `order show --limit` lists. */
const MAX_LINE_LIMIT = 1000;

const ENTITY_HELP = `<entity> is the value the route's orderBy reads from a body, as it reads it: for
orderBy {body:/data/object/customer}, the customer id (cus_123).`;

const SHOW_USAGE = `retryproof order show <route> <entity> [--limit N] (--local [--region R] | --stack NAME) [--json]

The line of one entity of a route ordered per entity (orderBy): the place whose turn it is,
the places from there on with each record's status, attempts and whether it waits parked, and
what holds the line: a FAILED head (only a person moves it on), a head that is retrying or
running, or one PARKED because the route is paused. A place that waited parked shows
"parked" while its record still does, "woken" once its wake-up was sent.

${ENTITY_HELP}

  --limit N   the most places listed (default ${DEFAULT_LINE_LIMIT})

JSON: {"route", "entity", "entityHash", "next", "more",
       "places": [{"place", "key", "receivedAt", "waiting" (marked to be woken), "status"? (absent: gone), "attempts"?}],
       "head"?: {"place", "key", "receivedAt", "status", "attempts", "lastError"?,
                 "state": "failed" | "retrying" | "queued" | "running" | "paused" | "parked", "why"}}`;

const SKIP_USAGE = `retryproof order skip <route> <entity> (--local [--region R] | --stack NAME) [--json]

Moves the line of one entity past its FAILED head, and wakes the next record if it waits
parked (its message goes onto the route's queue, as when a head completes). The skipped
record stays FAILED; redriven later, it runs at the end of its line, never beside another
run of the entity. Refused, with exit code 1 and nothing changed, when the head is not
FAILED (retrying, running, parked: it moves on by itself, or with routes resume) or the
line holds no work. A head whose record completed or is gone is passed as a turn would.
To run the head instead, fix the cause and redrive it: the line then moves on by itself.

${ENTITY_HELP}

JSON: {"route", "entity", "outcome": "skipped" | "passed" | "refused",
       "skipped"?: {"place", "key", "receivedAt", "status", "attempts"}, "woken"?: {"key", "receivedAt"}, "refused"?: "<why>"}`;

/** The route and entity of the command line, checked against the receiver, and its line control. */
async function lineOf(ctx: CommandContext, positionals: readonly string[]): Promise<{ route: string; entity: string; lines: LineControl }> {
  const [route = '', entity = ''] = positionals;
  const target = await ctx.target();
  // A route the stack does not have is a mistyped argument: a usage error, as in `routes`.
  if (!target.routes.includes(route)) throw unknownRouteError(target, route);
  return { route, entity, lines: createLineControl(operatorOptionsOf(target, ctx.now)) };
}

/** A route without orderBy, an empty entity: the command line is wrong, and nothing was done. */
async function asUsage<T>(usage: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof LineSelectionError) throw new UsageError(err.message, usage, { cause: err });
    throw err;
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A place marked waiting keeps its mark after its wake-up: its record's state tells the two apart. */
function waits(place: LineShow['places'][number]): string {
  if (!place.waiting) return '';
  return place.status === RECORD_STATUS.parked ? 'parked' : 'woken';
}

function showText(line: LineShow): string {
  const name = `the line of ${line.entity} on route ${line.route}`;
  if (line.places.length === 0) return `${name} holds no work from its cursor (place ${line.next}) on\n`;
  const head = line.head;
  const lines = [
    `${name}: its turn is at place ${line.next}`,
    head === undefined
      ? 'nothing holds it: the places listed completed or are gone, and the next turn passes them'
      : `held by place ${head.place}, ${head.key}: ${head.why}`,
    ...(head?.lastError === undefined ? [] : [`  last error  ${head.lastError}`]),
    '',
    table(
      ['place', 'key', 'status', 'attempts', 'waits', 'received'],
      line.places.map((p) => [String(p.place), p.key, p.status ?? 'gone', p.attempts === undefined ? '' : String(p.attempts), waits(p), formatTime(p.receivedAt)]),
    ),
    ...(line.more ? [`... and more (--limit N lists up to ${MAX_LINE_LIMIT})`] : []),
  ];
  return `${lines.join('\n')}\n`;
}

function skipText(route: string, entity: string, out: Exclude<SkipOutcome, { kind: 'refused' }>): string {
  const moved =
    out.kind === 'skipped'
      ? `skipped place ${out.skipped.place} of the line of ${entity} on route ${route}: ${out.skipped.key} stays FAILED (${plural(out.skipped.attempts, 'attempt')}); redriven later, it runs at the end of its line`
      : `nothing held the head of the line of ${entity} on route ${route} (its record completed, or is gone): the cursor moved past it`;
  const next = out.woken === undefined ? 'no record waited parked at the next place: the next one runs when its own message comes' : `woke ${out.woken.key}: its message is on the queue`;
  return `${moved}\n${next}\n`;
}

export const orderShowCommand: Command = {
  name: 'order show',
  summary: "an entity's line on a route ordered per entity: its turn, its places, and what holds it",
  usage: SHOW_USAGE,
  options: { limit: { type: 'string' } },
  args: ['route', 'entity'],
  async run(ctx, { values, positionals }) {
    const limit = intFlag('limit', typeof values.limit === 'string' ? values.limit : undefined, 1, MAX_LINE_LIMIT, SHOW_USAGE) ?? DEFAULT_LINE_LIMIT;
    const { route, entity, lines } = await lineOf(ctx, positionals);
    const line = await asUsage(SHOW_USAGE, () => lines.showLine(route, entity, limit));
    ctx.print(ctx.json ? `${JSON.stringify(line, null, 2)}\n` : showText(line));
    return 0;
  },
};

export const orderSkipCommand: Command = {
  name: 'order skip',
  summary: "move an entity's line past its FAILED head, and wake the next record",
  usage: SKIP_USAGE,
  options: {},
  args: ['route', 'entity'],
  async run(ctx, { positionals }) {
    const { route, entity, lines } = await lineOf(ctx, positionals);
    const out = await asUsage(SKIP_USAGE, () => lines.skipHead(route, entity));
    if (ctx.json) {
      const { kind, ...detail } = out;
      const fields = out.kind === 'refused' ? { refused: out.reason } : detail;
      ctx.print(`${JSON.stringify({ route, entity, outcome: kind, ...fields }, null, 2)}\n`);
      return out.kind === 'refused' ? 1 : 0;
    }
    if (out.kind === 'refused') throw new CliError(out.reason);
    ctx.print(skipText(route, entity, out));
    return 0;
  },
};
