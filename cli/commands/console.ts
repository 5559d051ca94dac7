/** `retryproof console`: the operator's web console, served on loopback with the operator's own credentials. */
import { randomBytes } from 'node:crypto';
import { intFlag } from '../args.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { startConsole } from '../console/server.ts';

const USAGE = `retryproof console (--local [--region R] | --stack NAME [--receiver ID] [--region R]) [--port N] [--token T]

Serves a web console for the receiver on http://127.0.0.1 only: an overview per route, the
deliveries (newest first, filtered), a delivery's record, attempts and ledger entries, the DLQ,
and the actions of the CLI's verbs (redrive, pause and resume, skip an ordered line) after a
confirmation. It uses this shell's AWS credentials, as every verb does, and adds nothing to the
account. The last line of stdout is the URL to open, with its one-time token; every page and
call without the token answers 401. Ctrl-C stops it. See docs/console.md.

  --port N    the port to listen on (default: a free one)
  --token T   the token to require (default: a random one, new each run); for scripts and tests`;

export const consoleCommand: Command = {
  name: 'console',
  summary: 'a web console on 127.0.0.1: overview, deliveries, a delivery, the DLQ, and the actions',
  usage: USAGE,
  options: { port: { type: 'string' }, token: { type: 'string' } },
  args: [],
  async run(ctx, { values }) {
    const port = intFlag('port', typeof values.port === 'string' ? values.port : undefined, 0, 65_535, USAGE) ?? 0;
    const given = typeof values.token === 'string' ? values.token : undefined;
    if (given !== undefined && given.length < 4) throw new UsageError('--token must be at least 4 characters', USAGE);
    const token = given ?? randomBytes(18).toString('base64url');
    const target = await ctx.target();
    const running = await startConsole({ target, token, port, now: ctx.now });
    ctx.progress(`console: serving ${target.description}; Ctrl-C stops it`, { whole: true });
    ctx.print(`${running.origin}/?token=${encodeURIComponent(token)}\n`);
    // Until Ctrl-C (or a TERM): the CLI then closes the target's clients.
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.removeListener('SIGINT', stop);
        process.removeListener('SIGTERM', stop);
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await running.close();
    return 0;
  },
};
