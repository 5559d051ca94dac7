/** `retryproof --local wait [--timeout S]`: waits until the local stack started in the background is ready. */
import { durationFlag } from '../args.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { localDir, localRegionIn, localRegionsIn, UnknownRegionError } from '../../local/index.ts';
import { waitForLocalStack } from '../operations/local-stack-readiness.ts';

const USAGE = `retryproof wait [--timeout S] --local [--region R] [--json]

Waits until the local stack is ready: its endpoints.json exists and its gateway answers
(every Region's, for a stack started with --regions; --region R names R's URL, and fails
with exit code 2 when the stack runs no Region R).
For scripts that start it in the background:

  npm start > stack.log 2>&1 &
  npx retryproof --local wait && npm run storm

Exit code 0 once it is ready, 1 if it is not ready in time.

  --timeout S   give up after S seconds, or a duration such as 90s or 2m (default 60)

JSON: {"ready": true, "httpUrl", "dir", "waitedMs", "regions": [{"name", "httpUrl"}]}  (httpUrl: R's, else the first Region's)`;

const DEFAULT_TIMEOUT_MS = 60_000;

/** `--timeout`: whole seconds (`60`), or a duration (`90s`, `2m`). */
function timeoutFlag(text: string | undefined): number | undefined {
  if (text !== undefined && /^\d+$/.test(text.trim())) return Number(text) * 1000;
  try {
    return durationFlag('timeout', text, USAGE, true);
  } catch {
    throw new UsageError(`--timeout must be seconds (60) or a duration such as 90s or 2m, got ${JSON.stringify(text)}`, USAGE);
  }
}

export const waitCommand: Command = {
  name: 'wait',
  summary: 'wait until the local stack (npm start in the background) is ready',
  usage: USAGE,
  options: { timeout: { type: 'string' } },
  args: [],
  async run(ctx, { values }) {
    if (typeof values.stack === 'string') {
      throw new UsageError('wait works on the local stack only (--local); a deployed stack is ready when cdk deploy returns', USAGE);
    }
    if (values.local !== true) throw new UsageError('say which stack: --local (wait works on the local stack only)', USAGE);
    const timeoutMs = timeoutFlag(values.timeout as string | undefined) ?? DEFAULT_TIMEOUT_MS;
    const dir = localDir(ctx.env);
    const { endpoints, waitedMs } = await waitForLocalStack(dir, {
      timeoutMs,
      // One whole line per reason: a stack started with `&` writes its ready line to the same terminal.
      onWaiting: (reason) => {
        ctx.progress(`waiting for the local stack in ${dir}: ${reason}`, { whole: true });
      },
    });
    const asked = typeof values.region === 'string' ? values.region : undefined;
    let httpUrl: string;
    try {
      httpUrl = localRegionIn(endpoints, asked).httpUrl;
    } catch (err) {
      if (err instanceof UnknownRegionError) throw new UsageError(`--region ${err.region}: ${err.message}`, USAGE);
      throw err;
    }
    const regions = localRegionsIn(endpoints).map((r) => ({ name: r.name, httpUrl: r.httpUrl }));
    if (ctx.json) ctx.print(`${JSON.stringify({ ready: true, httpUrl, dir, waitedMs: Math.round(waitedMs), regions })}\n`);
    else {
      const others = regions.length === 1 ? '' : ` (regions ${regions.map((r) => `${r.name} ${r.httpUrl}`).join(', ')})`;
      ctx.print(`the local stack is ready at ${httpUrl}${asked === undefined ? '' : ` (region ${asked})`}${others} (waited ${(waitedMs / 1000).toFixed(1)} s)\n`);
    }
    return 0;
  },
};
