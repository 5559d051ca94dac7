/** `retryproof dlq redrive`: send every DLQ message back to its work queue (its route's own, or the shared one). */
import type { Command } from '../command.ts';
import { redriveDeadLetters, SOURCE_QUEUES } from '../operations/dead-letters.ts';
import type { DeadLetterRow } from '../operations/dead-letters.ts';

const USAGE = `retryproof dlq redrive [--detach] (--local [--region R] | --stack NAME) [--json]

Sends every DLQ message back to the work queue, where the executor claims it again: a
route with a queue of its own (rateLimit, concurrency or ownQueue) gets its messages on
that queue, every other route on the shared one. On AWS this starts an SQS message move
task and follows it: to the work queue, or, when routes have queues of their own, with no
destination, which returns each message to the queue it came from. Locally (fauxqs has no
move tasks) messages are received, sent to their route's queue and deleted, a batch at a time.
Work that completed meanwhile is acknowledged as a duplicate, never run twice.
Locally, --region R redrives R's DLQ onto R's work queue (default: the first Region's).

A message whose route is not in the configuration the receiver runs cannot run: a line
names each. Locally it stays in the DLQ with a reason that says so; on AWS the move task
takes it too, and the executor sends it back.

  --detach   AWS: return once the move task has started

JSON: {"mode": "move-task" | "receive-send-delete", "moved": N, "unrunnable": [rows as dlq list],
       "byQueue"?: {"<queue>": N} (locally), "destination"?: "<queue ARN>" | "source queues" (move task), "taskHandle"?, "status"?}`;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export const dlqRedriveCommand: Command = {
  name: 'dlq redrive',
  summary: 'send the DLQ back to the work queue',
  usage: USAGE,
  options: { detach: { type: 'boolean' } },
  args: [],
  async run(ctx, { values }) {
    const target = await ctx.target();
    const aws = target.kind === 'aws';
    const result = await redriveDeadLetters(target, {
      detach: values.detach === true,
      onProgress: (moved, total, kept) => {
        ctx.progress(`redrive: ${moved}${total === undefined ? '' : `/${total}`} moved${kept === 0 ? '' : `, ${kept} kept in the DLQ`}`);
      },
      onUnrunnable: (row: DeadLetterRow) => {
        if (!ctx.json) ctx.print(`${aws ? 'will come back to the DLQ' : 'kept in the DLQ'}: ${row.route}/${row.key}: route "${row.route}" is not in the configuration ${target.description} runs\n`);
      },
    });
    if (ctx.json) {
      ctx.print(`${JSON.stringify(result, null, 2)}\n`);
    } else if (result.mode === 'move-task') {
      const to = result.destination === SOURCE_QUEUES ? ' back to their source queues' : '';
      ctx.print(
        `move task ${result.taskHandle ?? '?'}: ${result.status ?? '?'}, ${result.moved} moved${to}` +
          `${result.failureReason === undefined ? '' : ` (${result.failureReason})`}\n`,
      );
    } else if (result.moved === 0 && result.unrunnable.length === 0) {
      ctx.print('the DLQ is empty: nothing to redrive\n');
    } else {
      const kept = result.unrunnable.length === 0 ? '' : `; ${plural(result.unrunnable.length, 'message')} kept in the DLQ (route not in the running configuration)`;
      // One work queue: as it always read. Several: how many went to each.
      const queues = Object.entries(result.byQueue ?? {});
      const where =
        Object.keys(target.routeQueueUrls ?? {}).length === 0 || queues.length === 0
          ? 'the work queue'
          : `the work queues (${queues.map(([queue, n]) => `${n} to ${queue}`).join(', ')})`;
      ctx.print(`moved ${plural(result.moved, 'message')} from the DLQ to ${where}${kept}\n`);
    }
    return result.status === undefined || result.status === 'COMPLETED' || result.status === 'RUNNING' ? 0 : 1;
  },
};
