/** The DLQ screen (`dlq list`'s peek: nothing is consumed) and an ordered line's screen (`order show`). */
import type { DeadLetterRow } from '../operations/dead-letters.ts';
import type { LineShow } from '../../lambdas/routes/line-control.ts';
import { age, html, query, when } from './html.ts';
import type { SafeHtml } from './html.ts';

/** The DLQ's <main>: each message with its reason and context, and the way to redrive them. */
export function dlqMain(rows: readonly DeadLetterRow[], max: number, now: number): SafeHtml {
  const table =
    rows.length === 0
      ? html`<p>The DLQ is empty.</p>`
      : html`<div class="scroll"><table><thead><tr><th scope="col">route</th><th scope="col">key</th><th scope="col" class="num">attempts</th><th scope="col">received (UTC)</th><th scope="col">in the DLQ for</th><th scope="col">reason</th><th scope="col">last error</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td>${r.route}</td><td class="mono"><a href="/delivery${query({ route: r.route, key: r.key })}">${r.key}</a></td><td class="num">${r.attempts ?? '-'}</td><td>${when(r.receivedAt ?? undefined)}</td><td>${r.sentAt === null ? '-' : age(now - r.sentAt)}</td><td>${r.reason}</td><td>${r.lastError ?? ''}</td></tr>`)}
</tbody></table></div><p class="muted">${rows.length} message${rows.length === 1 ? '' : 's'}${rows.length >= max ? ` (the first ${max})` : ''}; listing consumes nothing.</p>`;
  return html`${table}<div class="actions"><a href="/confirm/dlq-redrive">Redrive the DLQ…</a></div>`;
}

/** An ordered line's <main>: whose turn it is, what holds it, its places, and the skip. */
export function lineMain(routes: readonly string[], route: string | undefined, entity: string | undefined, line: LineShow | undefined): SafeHtml {
  const form = html`<form class="filters" method="get" action="/line" aria-label="Show an ordered line">
<label>Route<select name="route">${routes.map((r) => (r === route ? html`<option selected>${r}</option>` : html`<option>${r}</option>`))}</select></label>
<label>Entity (as the route's orderBy reads it)<input name="entity" value="${entity ?? ''}" required></label><button type="submit">Show the line</button></form>`;
  if (line === undefined) return form;
  const head = line.head;
  return html`${form}<p>The turn is at place ${line.next}. ${head === undefined ? 'Nothing holds the line.' : html`Held by place ${head.place}, <span class="mono">${head.key}</span>: ${head.why}`}</p>
${head?.state === 'failed' ? html`<div class="actions"><a href="/confirm/skip${query({ route: line.route, entity: line.entity })}">Skip the head…</a></div>` : ''}
<div class="scroll"><table><thead><tr><th scope="col" class="num">place</th><th scope="col">key</th><th scope="col">status</th><th scope="col" class="num">attempts</th><th scope="col">received (UTC)</th></tr></thead><tbody>
${line.places.map((p) => html`<tr><td class="num">${p.place}</td><td class="mono"><a href="/delivery${query({ route: line.route, key: p.key })}">${p.key}</a></td><td>${p.status ?? 'gone'}</td><td class="num">${p.attempts ?? ''}</td><td>${when(p.receivedAt)}</td></tr>`)}
</tbody></table></div>`;
}
