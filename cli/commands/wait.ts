/** `retryproof --local wait [--timeout S]`: waits until the local stack started in the background is ready. */
import { durationFlag } from '../args.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { localDir } from '../../local/endpoints-file.ts';
import { waitForLocalStack } from '../operations/local-stack-readiness.ts';

const USAGE = `retryproof wait [--timeout S] --local [--json]

Waits until the local stack is ready: its endpoints.json exists and its gateway answers.
For scripts that start it in the background:

  npm start > stack.log 2>&1 &
  npx retryproof --local wait && npm run storm

Exit code 0 once it is ready, 1 if it is not ready in time.

  --timeout S   give up after S seconds, or a duration such as 90s or 2m (default 60)

JSON: {"ready": true, "httpUrl", "dir", "waitedMs"}`;

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
      onWaiting: (reason, waited) => {
        ctx.progress(`waiting for the local stack in ${dir}: ${reason} (${Math.floor(waited / 1000)} s)`);
      },
    });
    if (ctx.json) ctx.print(`${JSON.stringify({ ready: true, httpUrl: endpoints.httpUrl, dir, waitedMs: Math.round(waitedMs) })}\n`);
    else ctx.print(`the local stack is ready at ${endpoints.httpUrl} (waited ${(waitedMs / 1000).toFixed(1)} s)\n`);
    return 0;
  },
};
