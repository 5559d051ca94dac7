/** `retryproof inspect <route> <key>`: one delivery's record, execution log and ledger entries. */
import type { Command } from '../command.ts';
import { inspectDelivery } from '../operations/inspect-delivery.ts';
import { formatTime, table } from '../output.ts';

function text(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

export const inspectCommand: Command = {
  name: 'inspect',
  summary: "one delivery's record, execution log and ledger entries",
  usage: `retryproof inspect <route> <key> [--with-body] (--local | --stack NAME) [--json]

  --with-body   include the stored body (left out by default: it carries customer data)

JSON: {"record": {status, hits, attempts, receivedAt, ...} | null, "log": [...], "ledger": [...]}`,
  options: { 'with-body': { type: 'boolean' } },
  args: ['route', 'key'],
  async run(ctx, { values, positionals }) {
    const [route = '', key = ''] = positionals;
    const found = await inspectDelivery(await ctx.target(), route, key, { withBody: values['with-body'] === true, now: ctx.now() });
    if (ctx.json) {
      ctx.print(`${JSON.stringify(found, null, 2)}\n`);
      return found.record === null ? 1 : 0;
    }
    const r = found.record;
    if (r === null) {
      ctx.print(`no record for ${route}/${key} (never received, or expired)\n`);
    } else {
      ctx.print(
        [
          `${r.route}/${r.key}`,
          `  status     ${r.status}`,
          `  hits       ${r.hits} (deliveries of this key)`,
          `  attempts   ${r.attempts}${r.redrives > 0 ? ` since redrive ${r.redrives} (${r.runs} run${r.runs === 1 ? '' : 's'} in all)` : ''}`,
          `  received   ${formatTime(r.receivedAt)}   answered ${r.answerStatus}`,
          ...(r.completedAt === undefined ? [] : [`  completed  ${formatTime(r.completedAt)}`]),
          ...(r.leaseUntil === undefined ? [] : [`  lease to   ${formatTime(r.leaseUntil)}`]),
          ...(r.lastError === undefined ? [] : [`  last error ${r.lastError}`]),
          `  expires    ${formatTime(r.expiresAt * 1000)}`,
          '',
        ].join('\n'),
      );
    }
    if (found.log.length > 0) {
      ctx.print(
        `${table(
          ['attempt', 'kind', 'outcome', 'started', 'ms', 'error'],
          found.log.map((e) => [
            text(e.attempt),
            text(e.kind),
            text(e.outcome),
            formatTime(typeof e.startedAt === 'number' ? e.startedAt : undefined),
            typeof e.endedAt === 'number' && typeof e.startedAt === 'number' ? String(e.endedAt - e.startedAt) : '',
            typeof e.error === 'object' && e.error !== null ? text((e.error as { message?: unknown }).message) : '',
          ]),
        )}\n`,
      );
    }
    ctx.print(
      found.ledger.length === 0
        ? 'no ledger entries\n'
        : `${table(
            ['entryId', 'amount', 'status', 'posted'],
            found.ledger.map((e) => [e.entryId, `${e.amount} ${e.currency}`, e.status, formatTime(e.postedAt)]),
          )}\n`,
    );
    return r === null ? 1 : 0;
  },
};
