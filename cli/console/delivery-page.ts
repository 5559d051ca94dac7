/**
 * A delivery's screen: its record, every attempt of its execution log, its ledger entries, where
 * it is now, and its body only when the operator asks (bodies carry personal data): otherwise
 * its size and fingerprint. The data is `retryproof inspect`'s (inspectDelivery).
 */
import type { DeadLetterRow } from '../operations/dead-letters.ts';
import type { Inspection, RecordView } from '../operations/inspect-delivery.ts';
import { html, query, when } from './html.ts';
import type { SafeHtml } from './html.ts';

function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

/** Where the work is now, in words, from its record (and its DLQ copy, when one was found). */
export function whereNow(r: RecordView, dead: DeadLetterRow | undefined, now: number): string {
  switch (r.status) {
    case 'COMPLETED':
      return `done: completed at ${when(r.completedAt)}`;
    case 'EXECUTING':
      return r.leaseUntil !== undefined && r.leaseUntil > now ? `running: a worker holds its lease until ${when(r.leaseUntil)}` : 'running, its lease expired: it runs again when its message comes back';
    case 'RECEIVED':
      return r.waitingUntil === undefined ? 'queued: its message waits on the work queue' : `waiting for its route's rate limit, back at ${when(r.waitingUntil)}`;
    case 'PARKED':
      return r.waitingTurn === undefined
        ? 'parked: its route is paused; resuming the route runs it'
        : `waiting in its line: place ${r.waitingTurn} of its entity's line, behind an earlier delivery; it runs when the line reaches it`;
    case 'FAILED':
      return dead === undefined ? 'failed: it runs again only when a person redrives it' : `failed, and in the DLQ: ${dead.reason}`;
    default:
      return r.status;
  }
}

function recordFacts(r: RecordView, dead: DeadLetterRow | undefined, now: number, withBody: boolean): SafeHtml {
  return html`<dl class="facts">
<dt>status</dt><dd><span class="badge s-${r.status}">${r.status}</span></dd>
<dt>where it is now</dt><dd>${whereNow(r, dead, now)}</dd>
<dt>deliveries of the key</dt><dd>${r.hits}</dd>
<dt>attempts</dt><dd>${r.attempts} in this budget; ${r.runs} runs in all; ${r.redrives} redrive${r.redrives === 1 ? '' : 's'}</dd>
<dt>received</dt><dd>${when(r.receivedAt)} UTC</dd>
${r.completedAt === undefined ? '' : html`<dt>completed</dt><dd>${when(r.completedAt)} UTC</dd>`}
<dt>answer given</dt><dd>${r.answerStatus}</dd>
${r.result === undefined ? '' : html`<dt>result</dt><dd class="mono">${JSON.stringify(r.result)}</dd>`}
${r.lastError === undefined ? '' : html`<dt>last error</dt><dd>${r.lastError}</dd>`}
${dead === undefined ? '' : html`<dt>DLQ reason</dt><dd>${dead.reason}${dead.lastError === null ? '' : html` (${dead.lastError})`}</dd>`}
<dt>expires</dt><dd>${when(r.expiresAt * 1000)} UTC</dd>
<dt>body</dt><dd>${r.bodyBytes} bytes, fingerprint <span class="mono">${r.fingerprint}</span>${withBody ? '' : html` · <a href="/delivery${query({ route: r.route, key: r.key, body: '1' })}">Show the body</a>`}</dd>
</dl>`;
}

function attemptsTable(log: Inspection['log']): SafeHtml {
  if (log.length === 0) return html`<p>No attempt yet.</p>`;
  return html`<div class="scroll"><table><thead><tr><th scope="col" class="num">attempt</th><th scope="col">kind</th><th scope="col">worker</th><th scope="col">started (UTC)</th><th scope="col">ended</th><th scope="col">outcome</th><th scope="col">error</th></tr></thead><tbody>
${log.map((e) => {
    const error = typeof e.error === 'object' && e.error !== null ? text((e.error as { message?: unknown }).message) : '';
    return html`<tr><td class="num">${text(e.attempt)}</td><td>${text(e.kind)}</td><td class="mono">${text(e.requestId)}</td><td>${when(num(e.startedAt))}</td><td>${when(num(e.endedAt))}</td><td>${text(e.outcome)}</td><td>${error}</td></tr>`;
  })}</tbody></table></div>`;
}

function ledgerTable(ledger: Inspection['ledger']): SafeHtml {
  if (ledger.length === 0) return html`<p>No ledger entry.</p>`;
  return html`<div class="scroll"><table data-testid="ledger"><thead><tr><th scope="col">entry</th><th scope="col" class="num">amount</th><th scope="col">status</th><th scope="col">posted (UTC)</th><th scope="col">reversed</th></tr></thead><tbody>
${ledger.map((e) => html`<tr><td class="mono">${e.entryId}</td><td class="num">${e.amount ?? ''} ${e.currency ?? ''}</td><td>${e.status}</td><td>${when(e.postedAt)}</td><td>${e.reversedAt === undefined ? '' : `${when(e.reversedAt)} ${e.reversalReason ?? ''}`}</td></tr>`)}
</tbody></table></div>`;
}

function bodyPart(r: RecordView): SafeHtml {
  if (r.body === undefined) {
    const where = r.bodySource === 'missing' ? 'its object in the bucket is gone' : 'the table does not keep it (it travels in the work message, and in the DLQ copy)';
    return html`<h2>Body</h2><p>Not shown: ${where}.</p>`;
  }
  const shown = r.bodyEncoding === 'base64' ? Buffer.from(r.body, 'base64').toString('utf8') : r.body;
  return html`<h2>Body</h2><p class="notice warn">The body can hold personal data. <a href="/delivery${query({ route: r.route, key: r.key })}">Hide it</a></p><pre>${shown}</pre>`;
}

/** The delivery's <main>; `withBody` when the operator asked for the body. */
export function deliveryMain(route: string, key: string, found: Inspection, dead: DeadLetterRow | undefined, now: number, withBody: boolean): SafeHtml {
  const r = found.record;
  const head = html`<p class="mono">${route} / ${key}</p>`;
  if (r === null) return html`${head}<p class="notice warn">No record of this key on route ${route}: never received, or expired.</p>${found.log.length === 0 ? '' : attemptsTable(found.log)}`;
  const actions = r.status === 'FAILED' ? html`<div class="actions"><a href="/confirm/redrive${query({ route, key })}">Redrive this delivery…</a></div>` : '';
  return html`${head}${actions}<h2>Record</h2>${recordFacts(r, dead, now, withBody)}
<h2>Attempts</h2>${attemptsTable(found.log)}<h2>Ledger entries</h2>${ledgerTable(found.ledger)}${withBody ? bodyPart(r) : ''}`;
}
