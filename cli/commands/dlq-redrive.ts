/** `retryproof dlq redrive`: send every DLQ message back to the work queue. */
import type { Command } from '../command.ts';
import { redriveDeadLetters } from '../operations/dead-letters.ts';

const USAGE = `retryproof dlq redrive [--detach] (--local [--region R] | --stack NAME) [--json]

Sends every DLQ message back to the work queue, where the executor claims it again.
On AWS this starts an SQS message move task (DLQ -> work queue) and follows it; locally
(fauxqs has no move tasks) messages are received, sent and deleted one batch at a time.
Work that completed meanwhile is acknowledged as a duplicate, never run twice.
Locally, --region R redrives R's DLQ onto R's work queue (default: the first Region's).

  --detach   AWS: return once the move task has started

JSON: {"mode": "move-task" | "receive-send-delete", "moved": N, "taskHandle"?, "status"?}`;

export const dlqRedriveCommand: Command = {
  name: 'dlq redrive',
  summary: 'send the DLQ back to the work queue',
  usage: USAGE,
  options: { detach: { type: 'boolean' } },
  args: [],
  async run(ctx, { values }) {
    const target = await ctx.target();
    const result = await redriveDeadLetters(target, {
      detach: values.detach === true,
      onProgress: (moved, total) => {
        ctx.progress(`redrive: ${moved}${total === undefined ? '' : `/${total}`} moved`);
      },
    });
    if (ctx.json) {
      ctx.print(`${JSON.stringify(result, null, 2)}\n`);
    } else if (result.mode === 'move-task') {
      ctx.print(
        `move task ${result.taskHandle ?? '?'}: ${result.status ?? '?'}, ${result.moved} moved` +
          `${result.failureReason === undefined ? '' : ` (${result.failureReason})`}\n`,
      );
    } else {
      ctx.print(`moved ${result.moved} message${result.moved === 1 ? '' : 's'} from the DLQ to the work queue\n`);
    }
    return result.status === undefined || result.status === 'COMPLETED' || result.status === 'RUNNING' ? 0 : 1;
  },
};
