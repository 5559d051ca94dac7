/** `retryproof redrive`: run a selection of FAILED (and optionally PARKED) records again, each once. */
import { createBulkRedrive, RedriveSelectionError } from '../../lambdas/routes/bulk-redrive.ts';
import { FailedIndexMissingError } from '../../lambdas/store/dynamodb-failed-records.ts';
import type { RedriveOutcome, RedriveSelection } from '../../lambdas/routes/bulk-redrive.ts';
import { durationFlag, numberFlag } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, UsageError } from '../errors.ts';
import { clip, formatTime, table } from '../output.ts';
import { operatorOptionsOf, unknownRouteError } from '../target.ts';

/** Sends a second, unless --rate says otherwise: a backlog's worth of work at a pace the executor drains. */
export const DEFAULT_REDRIVE_RATE = 50;
/** The exit code of a run stopped by Ctrl-C (128 + SIGINT), as shells report it. */
const EXIT_INTERRUPTED = 130;

const USAGE = `retryproof redrive (--local | --stack NAME) [--route R[,R...]] [--since T] [--until T]
                  [--error TEXT] [--key PREFIX] [--parked] [--all] [--dry-run] [--rate N] [--json]

Runs FAILED records again, each once, with a fresh retry budget: the same redrive a DLQ copy
makes, for a whole incident at a time. Records are found through the sparse \`failed\` index,
by route and time of receipt; the filters add up. A record that is not FAILED (completed,
running, redriven already) is never run again, so an interrupted run (Ctrl-C) is finished by
running the same command again. The DLQ copies of redriven records stay in the DLQ and are
harmless: a later "Start DLQ redrive" runs none of them a second time.

  --route R     the route (or a comma-separated list); default: every route
  --since T     received at or after T: an ISO 8601 instant (2026-12-03T10:00:00Z) or an age (90m, 24h, 7d)
  --until T     received before T, as --since
  --error TEXT  the last error contains TEXT (case-sensitive)
  --key PREFIX  the idempotency key starts with PREFIX
  --parked      PARKED records of active routes too (a paused route's parked work waits for routes resume)
  --all         every FAILED record of every route (needed when no filter is given)
  --dry-run     print the count and the first rows; change nothing
  --rate N      sends a second at most (default ${DEFAULT_REDRIVE_RATE})

JSON: --dry-run {"count", "byRoute", "first": [{"route", "key", "status", "receivedAt", "runs", "lastError"?}]};
      otherwise {"total", "redriven", "skipped", "unsendable", "interrupted"}`;

/** An instant from a flag: ISO 8601, or an age before now. */
function instantFlag(name: string, text: string | undefined, now: number): number | undefined {
  if (text === undefined) return undefined;
  if (/^\d+(?:\.\d+)?(ms|s|m|h|d)$/.test(text.trim())) return now - (durationFlag(name, text, USAGE) ?? 0);
  // An ISO date or instant; Date.parse alone would also take "3" or "December".
  const iso = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim());
  const ms = Date.parse(text.trim());
  if (!iso || !Number.isFinite(ms)) {
    throw new UsageError(`--${name} must be an ISO 8601 instant (2026-12-03T10:00:00Z) or an age (90m, 24h, 7d), got ${JSON.stringify(text)}`, USAGE);
  }
  return ms;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function outcomeLine(o: RedriveOutcome): string {
  const parts = [`${plural(o.redriven, 'record')} redriven of ${o.total} selected`];
  if (o.skipped > 0) parts.push(`${o.skipped} skipped (no longer FAILED: redriven or run already)`);
  if (o.unsendable > 0) parts.push(`${o.unsendable} without a kept payload (use dlq redrive for those)`);
  return parts.join('; ');
}

export const redriveCommand: Command = {
  name: 'redrive',
  summary: 'run FAILED work again by route, time, error or key, each record once',
  usage: USAGE,
  sameAs: { window: 'since' },
  options: {
    route: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    error: { type: 'string' },
    key: { type: 'string' },
    parked: { type: 'boolean' },
    all: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    rate: { type: 'string' },
  },
  args: [],
  async run(ctx, { values }) {
    const now = ctx.now();
    const text = (name: string): string | undefined => {
      const v = values[name];
      if (typeof v !== 'string') return undefined;
      if (v.trim() === '') throw new UsageError(`--${name} needs a value`, USAGE);
      return v;
    };
    const sinceMs = instantFlag('since', text('since'), now);
    const untilMs = instantFlag('until', text('until'), now);
    const rate = numberFlag('rate', text('rate'), 0.1, 10_000, USAGE) ?? DEFAULT_REDRIVE_RATE;
    const errorContains = text('error');
    const keyPrefix = text('key');
    const routeList = text('route');
    const filtered = [routeList, sinceMs, untilMs, errorContains, keyPrefix].some((v) => v !== undefined);
    if (!filtered && values.all !== true) {
      throw new UsageError('say what to redrive: --route, --since, --until, --error or --key (or --all for every FAILED record)', USAGE);
    }
    const target = await ctx.target();
    const routes = routeList === undefined ? target.routes : routeList.split(',').map((r) => r.trim());
    for (const route of routes) if (!target.routes.includes(route)) throw unknownRouteError(target, route);
    const selection: RedriveSelection = {
      routes,
      ...(sinceMs === undefined ? {} : { sinceMs }),
      ...(untilMs === undefined ? {} : { untilMs }),
      ...(errorContains === undefined ? {} : { errorContains }),
      ...(keyPrefix === undefined ? {} : { keyPrefix }),
      includeParked: values.parked === true,
    };
    const redrive = createBulkRedrive(operatorOptionsOf(target, ctx.now));
    try {
      if (values['dry-run'] === true) {
        const preview = await redrive.preview(selection);
        if (ctx.json) {
          ctx.print(`${JSON.stringify(preview, null, 2)}\n`);
          return 0;
        }
        const perRoute = Object.entries(preview.byRoute).map(([r, n]) => `${r} ${n}`).join(', ');
        ctx.print(`would redrive ${plural(preview.count, 'record')} (${perRoute}); nothing was changed\n`);
        if (preview.first.length > 0) {
          const rows = preview.first.map((r) => [r.route, r.key, r.status, formatTime(r.receivedAt), String(r.runs), clip(r.lastError ?? '', 60)]);
          ctx.print(`${table(['route', 'key', 'status', 'received', 'runs', 'last error'], rows)}\n`);
          if (preview.count > preview.first.length) ctx.print(`... and ${preview.count - preview.first.length} more\n`);
        }
        return 0;
      }
      // Ctrl-C finishes the record in hand, then stops: the next run continues from there.
      const stop = new AbortController();
      const onSigint = (): void => { stop.abort(); };
      process.once('SIGINT', onSigint);
      let outcome: RedriveOutcome;
      try {
        outcome = await redrive.run(selection, {
          ratePerSecond: rate,
          signal: stop.signal,
          onProgress: (p) => {
            const waiting = p.waitingMs === undefined ? '' : `; waiting ${Math.ceil(p.waitingMs / 1000)} s for a record that failed just now (its DLQ copy's margin)`;
            ctx.progress(`redrive: ${p.done}/${p.total} looked at, ${p.redriven} redriven, ${p.skipped} skipped${waiting}`);
          },
        });
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
      if (ctx.json) {
        ctx.print(`${JSON.stringify(outcome, null, 2)}\n`);
      } else if (outcome.interrupted) {
        ctx.print(`interrupted: ${outcomeLine(outcome)}; run the same command again to redrive the rest (nothing runs twice)\n`);
      } else {
        ctx.print(`${outcomeLine(outcome)}\n`);
      }
      return outcome.interrupted ? EXIT_INTERRUPTED : 0;
    } catch (err) {
      if (err instanceof RedriveSelectionError) throw new UsageError(err.message, USAGE, { cause: err });
      if (err instanceof FailedIndexMissingError) throw new CliError(err.message, { cause: err });
      throw err;
    }
  },
};
