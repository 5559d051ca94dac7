/** `retryproof inspect <route> <key>`: one delivery's record, execution log and ledger entries. */
import type { Command } from '../command.ts';
import { inspectDelivery } from '../operations/inspect-delivery.ts';
import type { RecordView } from '../operations/inspect-delivery.ts';
import { clip, formatTime, table } from '../output.ts';
import { unknownRouteError } from '../target.ts';

/** A body longer than this is cut in the text output (a 300 KB body would bury the record); --json holds it whole. */
export const BODY_SHOWN_BYTES = 4096;
/** An action's result longer than this (as one line of JSON) is cut in the text output. */
export const RESULT_SHOWN_CHARACTERS = 400;

const USAGE = `retryproof inspect <route> <key> [--with-body] (--local | --stack NAME) [--json]

Exit code 1 when the stack has no record of the key (never received, or expired).

  --with-body   include the stored body, between marker lines (left out by default: it carries customer data).
                The table keeps a body only where work may have to be sent again from it (a failed
                send, parked or failed work, a retried run); otherwise it lives in the work message
                until the work is done, and in the DLQ's copy for 14 days if the work failed.
                A large body (over its route's claimCheckAboveBytes) is kept in the receiver's
                bucket instead: its pointer is shown, and the body read back from the bucket.
                The text shows the first ${BODY_SHOWN_BYTES} bytes of a longer body; --json holds it whole.

JSON: {"record": {status, hits, attempts, receivedAt, leaseSeconds, leaseUntil, ...} | null, "log": [...], "ledger": [...]}`;

/**
 * The body between marker lines, so where it starts and ends is plain even when it is empty
 * or has no final newline. A base64 body is shown decoded when it is UTF-8 text.
 */
function bodyBlock(r: RecordView): string[] {
  let shown = r.body ?? '';
  const fromBucket = r.bodySource === 'bucket';
  let note = fromBucket ? `${Buffer.byteLength(shown, 'base64')} bytes, read from the bucket` : `${r.bodyBytes} bytes`;
  if (r.bodyEncoding === 'base64') {
    try {
      shown = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(shown, 'base64'));
      note += fromBucket ? ', shown as text' : ', stored as base64, shown decoded';
    } catch {
      note += ', binary, shown as base64';
    }
  }
  const bytes = Buffer.from(shown);
  const cut = bytes.length > BODY_SHOWN_BYTES;
  // Cut at a character boundary: a partial UTF-8 sequence decodes to U+FFFD, which is dropped.
  if (cut) shown = bytes.subarray(0, BODY_SHOWN_BYTES).toString('utf8').replace(/\uFFFD$/, '');
  const end = cut
    ? `----- body cut: the first ${Buffer.byteLength(shown)} of ${bytes.length} bytes shown; inspect ${r.route} ${r.key} --with-body --json holds it whole -----`
    : '----- end of body -----';
  return [`----- body of ${r.route}/${r.key} (${note}) -----`, ...(shown === '' ? [] : [shown.replace(/\n$/, '')]), end];
}

/** What `--with-body` prints: the body between marker lines, and where a large one is kept. */
function bodyLines(r: RecordView): string[] {
  if (r.bodyObject !== undefined) {
    const where = `  body       ${r.bodyBytes} bytes, in the receiver's bucket: ${r.bodyObject}`;
    if (r.bodySource === 'bucket') return [where, ...bodyBlock(r)];
    if (r.bodySource === 'missing') return [where, '             the object is gone (expired, or never stored): the body cannot be shown'];
    return [where, '             no client on the bucket here: the body is not read'];
  }
  if (r.body === undefined) return [`  body       ${r.bodyBytes} bytes, not kept in the table (it travels in the work message)`];
  return bodyBlock(r);
}

/**
 * The record's lease: its length (on a route with a time per destination, the one this record
 * was given) and, while it runs, its end. A record leased before records kept the length shows
 * only the end.
 */
function leaseLines(r: RecordView): string[] {
  if (r.leaseSeconds === undefined) return r.leaseUntil === undefined ? [] : [`  lease to   ${formatTime(r.leaseUntil)}`];
  const until = r.leaseUntil === undefined ? "the last attempt's" : `until ${formatTime(r.leaseUntil)}`;
  return [`  lease      ${r.leaseSeconds} s (${until})`];
}

/** The action's result as one line of JSON, cut when long. */
function resultLine(result: unknown): string {
  const json = JSON.stringify(result);
  const shown = json.length <= RESULT_SHOWN_CHARACTERS ? json : `${clip(json, RESULT_SHOWN_CHARACTERS)} (cut: --json holds it whole)`;
  return `  result     ${shown}`;
}

/** The record's text: its fields, one a line, and the body when asked for. */
export function recordText(r: RecordView, withBody: boolean): string {
  return [
    `${r.route}/${r.key}`,
    `  status     ${r.status}`,
    `  hits       ${r.hits} (deliveries of this key)`,
    `  attempts   ${r.attempts}${r.redrives > 0 ? ` since redrive ${r.redrives} (${r.runs} run${r.runs === 1 ? '' : 's'} in all)` : ''}`,
    `  received   ${formatTime(r.receivedAt)}   answered ${r.answerStatus}`,
    ...(r.waitingTurn === undefined ? [] : [`  waiting    in its line: place ${r.waitingTurn} of its entity's line, behind an earlier delivery`]),
    ...(r.waitingUntil === undefined ? [] : [`  waiting    for the route's rate limit, back ${formatTime(r.waitingUntil)} (deferred ${r.deferrals} time${r.deferrals === 1 ? '' : 's'}; no attempt spent)`]),
    ...(r.waitingUntil === undefined && r.deferrals > 0 ? [`  deferrals  ${r.deferrals} (waited for the route's rate limit)`] : []),
    ...(r.completedAt === undefined ? [] : [`  completed  ${formatTime(r.completedAt)}`]),
    ...(r.result === undefined ? [] : [resultLine(r.result)]),
    ...leaseLines(r),
    ...(r.lastError === undefined ? [] : [`  last error ${r.lastError}`]),
    `  expires    ${formatTime(r.expiresAt * 1000)}`,
    ...(withBody ? bodyLines(r) : []),
    '',
  ].join('\n');
}

function text(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

export const inspectCommand: Command = {
  name: 'inspect',
  summary: "one delivery's record, execution log and ledger entries",
  usage: USAGE,
  options: { 'with-body': { type: 'boolean' } },
  args: ['route', 'key'],
  async run(ctx, { values, positionals }) {
    const [route = '', key = ''] = positionals;
    const target = await ctx.target();
    const found = await inspectDelivery(target, route, key, { withBody: values['with-body'] === true, now: ctx.now() });
    // Only when nothing was found: a route removed from the config keeps its records until they expire.
    if (found.record === null && found.log.length === 0 && !target.routes.includes(route)) throw unknownRouteError(target, route);
    if (ctx.json) {
      ctx.print(`${JSON.stringify(found, null, 2)}\n`);
      return found.record === null ? 1 : 0;
    }
    const r = found.record;
    if (r === null) {
      ctx.print(`no record for ${route}/${key} (never received, or expired)\n`);
    } else {
      ctx.print(recordText(r, values['with-body'] === true));
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
