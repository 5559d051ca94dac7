/** `retryproof dlq list`: what is in the DLQ, without consuming it. */
import { intFlag } from '../args.ts';
import type { Command } from '../command.ts';
import { peekDeadLetters } from '../operations/dead-letters.ts';
import { clip, formatTime, table } from '../output.ts';

const USAGE = `retryproof dlq list [--max N] (--local [--region R] | --stack NAME) [--json]

Lists the dead-letter queue without consuming it: messages are received with a short
visibility timeout and made visible again at once. Each listing adds one to the DLQ
copies' receive count, which moves nothing (the DLQ has no redrive policy of its own).
Each local Region has its own DLQ: --region R lists R's (default: the first Region's).

  --max N   list at most N messages (default 100)

JSON: [{"route", "key", "attempts", "lastError", "receivedAt", "reason", "messageId", "sentAt"}]`;

export const dlqListCommand: Command = {
  name: 'dlq list',
  summary: 'list the DLQ without consuming it',
  usage: USAGE,
  options: { max: { type: 'string' } },
  args: [],
  async run(ctx, { values }) {
    const max = intFlag('max', values.max as string | undefined, 1, 10_000, USAGE) ?? 100;
    const rows = await peekDeadLetters(await ctx.target(), { max });
    if (ctx.json) {
      ctx.print(`${JSON.stringify(rows, null, 2)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      ctx.print('the DLQ is empty\n');
      return 0;
    }
    ctx.print(
      `${table(
        ['route', 'key', 'attempts', 'received', 'reason', 'last error'],
        rows.map((r) => [r.route, r.key, r.attempts === null ? '-' : String(r.attempts), formatTime(r.receivedAt), r.reason, clip(r.lastError ?? '-', 60)]),
      )}\n${rows.length} message${rows.length === 1 ? '' : 's'}${rows.length === max ? ` (the first ${max}; --max for more)` : ''}\n`,
    );
    return 0;
  },
};
