/** `retryproof reconcile [--window 24h]`: one reconciliation run now, with its report. */
import type { ReconcileReport } from '../../lambdas/reconciler/reconcile.ts';
import { CliError, UsageError } from '../errors.ts';
import { durationFlag } from '../args.ts';
import type { Command } from '../command.ts';
import { table } from '../output.ts';
import { reconcileDeployed } from '../reconciler-function.ts';

const USAGE = `retryproof reconcile [--window 24h] [--settle 5m] (--local [--region R] | --stack NAME) [--json]

Runs the reconciler once, over [now - window, now - settle]: re-enqueues stuck work,
reverses duplicate ledger effects (keeping the entry of the run that completed the work, else
the earliest), and lists what needs a person. Safe to run beside the scheduled run: every
correction is conditional. On a deployed stack the receiver's own reconciler function runs
(lambda:InvokeFunction), with the ledgers its actions declare, and the CLI prints its report; a
function it cannot run is an error (exit 1) saying no ledger was checked. There, with neither
flag, it is one more scheduled run: it continues a window the last run left unfinished (the
reconciler's cursor), or does nothing while another run holds it or one finished moments ago.
Locally one run covers every Region's records (they share one table); --region R runs R's
reconciler, which re-enqueues onto R's queue (default: the first Region's).

  --window D   how far back (default: the receiver's configured window, as it runs)
  --settle D   work younger than this is left alone; 0s for none (default: the receiver's settle
               margin, as it runs: locally with RETRYPROOF_SETTLE_S applied)

JSON: the run's report: {"runId", "window", "counts": {"scanned", "reenqueued", "reversed",
"missing", "orphans", "failed", "parked", "needsAttention"}, "needsAttention": [...], "reversals": [...],
"stoppedEarly", "stoppedAt"?, "cursor"?, "skipped"?, "notDue"?}`;

function windowTooShort(windowText: string, settleText: string): UsageError {
  return new UsageError(`--window ${windowText} must be longer than --settle ${settleText}: a run reconciles [now - window, now - settle]`, USAGE);
}

/** One run by the local stack's reconciler, through its admin call. */
async function reconcileOnStack(
  localUrl: string,
  request: { fromMs: number; toMs: number; settleSeconds: number; stuckAfterSeconds: number },
): Promise<ReconcileReport> {
  const answer = await fetch(`${localUrl}/_local/reconcile`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  if (!answer.ok) throw new CliError(`the local stack's reconcile answered ${answer.status}: ${await answer.text()}`);
  return (await answer.json()) as ReconcileReport;
}

export const reconcileCommand: Command = {
  name: 'reconcile',
  summary: 'one reconciliation run now, printing its report',
  usage: USAGE,
  options: { window: { type: 'string' }, settle: { type: 'string' } },
  sameAs: { since: 'window' },
  args: [],
  async run(ctx, { values }) {
    // Parse the flags before connecting: a bad flag is a usage error, with no call made.
    const windowFlag = durationFlag('window', values.window as string | undefined, USAGE);
    const settleFlag = durationFlag('settle', values.settle as string | undefined, USAGE, true);
    if (windowFlag !== undefined && settleFlag !== undefined && windowFlag <= settleFlag) throw windowTooShort(values.window as string, values.settle as string);
    const target = await ctx.target();
    // The margins of the receiver as it runs (target.config), not of a file in this checkout.
    const { reconciliation } = target.config;
    const windowMs = windowFlag ?? reconciliation.windowHours * 3_600_000;
    const settleMs = settleFlag ?? reconciliation.settleSeconds * 1000;
    if (windowMs <= settleMs) {
      const windowText = (values.window as string | undefined) ?? `${reconciliation.windowHours}h (the receiver's window)`;
      const settleText = (values.settle as string | undefined) ?? `${reconciliation.settleSeconds}s (the receiver's settle margin)`;
      throw windowTooShort(windowText, settleText);
    }
    const now = ctx.now();
    const window = { fromMs: now - windowMs, toMs: now - settleMs };
    // Neither flag: as the schedule runs, through the cursor (a window chosen by hand skips it).
    const scheduled = values.window === undefined && values.settle === undefined;
    // Locally, the stack's own reconciler runs: it has the routes and ledgers of the
    // configuration the stack was started with (npm start -- --config), not only the demo's.
    // Deployed, the receiver's own function does, for the same reason (reconciler-function.ts).
    const report =
      target.localUrl !== undefined
        ? await reconcileOnStack(target.localUrl, {
            ...window,
            settleSeconds: settleMs / 1000,
            stuckAfterSeconds: reconciliation.stuckAfterSeconds,
          })
        : await reconcileDeployed(target, ctx.aws, ctx.env, scheduled ? {} : window, (text) => {
            ctx.progress(text);
          });
    if (ctx.json) {
      ctx.print(`${JSON.stringify(report, null, 2)}\n`);
      return 0;
    }
    if (report.skipped !== undefined) {
      ctx.print(`another run holds the window until ${new Date(report.skipped.leaseUntil).toISOString()} (${report.skipped.holder}): nothing done\n`);
      return 0;
    }
    if (report.notDue !== undefined) {
      const ago = Math.round(report.notDue.minGapMs / 60_000);
      ctx.print(`a run finished the window up to ${new Date(report.notDue.finishedToMs).toISOString()} less than ${ago} min before this one's would end: nothing done (pass --window to run a window now)\n`);
      return 0;
    }
    const c = report.counts;
    const cursor = report.cursor === undefined ? '' : `, run ${report.cursor.runs} of this window${report.cursor.resumed ? ' (continued)' : ''}`;
    ctx.print(`window ${report.window.from} .. ${report.window.to}, ${report.durationMs} ms${cursor}${report.stoppedEarly ? ' (stopped early: budget; the next run continues)' : ''}\n`);
    ctx.print(
      `${table(
        ['scanned', 're-enqueued', 'reversed', 'missing', 'orphans', 'failed', 'parked', 'needs attention'],
        [[c.scanned, c.reenqueued, c.reversed, c.missing, c.orphans, c.failed, c.parked, c.needsAttention].map(String)],
      )}\n`,
    );
    if (report.needsAttention.length > 0) {
      ctx.print(`\n${table(['finding', 'route', 'key', 'detail'], report.needsAttention.map((n) => [n.finding, n.route, n.key, n.detail ?? '']))}\n`);
    }
    return 0;
  },
};
