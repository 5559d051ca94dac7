/** `retryproof ledger`: the ledgers' entries over a window (locally the stack's own ledgers, deployed the demo's). */
import { durationFlag } from '../args.ts';
import type { Command } from '../command.ts';
import { listLedger } from '../operations/ledger-entries.ts';
import { formatTime, table } from '../output.ts';

const USAGE = `retryproof ledger [--window 24h] [--route NAME] [--key KEY] (--local | --stack NAME) [--json]

  --window D    how far back: 90s, 15m, 24h, 7d (default 24h; 5 minutes of margin are added)
  --route NAME  only this route's entries
  --key KEY     only this key's entries

JSON: [{"entryId", "route", "idempotencyKey", "amount", "currency", "status": "posted" | "reversed", "postedAt", ...}]`;

export const ledgerCommand: Command = {
  name: 'ledger',
  summary: "ledger entries (posted and reversed) over a window: locally every ledger the stack's actions declare, deployed the demo's",
  usage: USAGE,
  options: { window: { type: 'string' }, route: { type: 'string' }, key: { type: 'string' } },
  sameAs: { since: 'window' },
  args: [],
  async run(ctx, { values }) {
    const windowMs = durationFlag('window', values.window as string | undefined, USAGE) ?? 24 * 3_600_000;
    const rows = await listLedger(await ctx.target(), windowMs, {
      ...(typeof values.route === 'string' ? { route: values.route } : {}),
      ...(typeof values.key === 'string' ? { key: values.key } : {}),
      now: ctx.now(),
    });
    if (ctx.json) {
      ctx.print(`${JSON.stringify(rows, null, 2)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      ctx.print('no ledger entries in the window\n');
      return 0;
    }
    ctx.print(
      `${table(
        ['posted', 'route', 'key', 'amount', 'status', 'entryId'],
        rows.map((e) => [formatTime(e.postedAt), e.route, e.idempotencyKey, `${e.amount} ${e.currency}`, e.status, e.entryId]),
      )}\n`,
    );
    const posted = rows.filter((e) => e.status === 'posted').length;
    ctx.print(`${rows.length} ${rows.length === 1 ? 'entry' : 'entries'}: ${posted} posted, ${rows.length - posted} reversed\n`);
    return 0;
  },
};
