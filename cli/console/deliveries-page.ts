/** The deliveries screen: the filters, a page of the newest deliveries, and the way to the next page. */
import { RECORD_STATUS } from '../../lambdas/domain/event-record.ts';
import type { DeliveryFilter, DeliveryPage } from '../operations/recent-deliveries.ts';
import { html, query, when } from './html.ts';
import type { SafeHtml } from './html.ts';

/** The filters as the form sends them. */
export interface DeliveryQuery {
  readonly route?: string;
  readonly status?: string;
  readonly since?: string;
  readonly until?: string;
  readonly key?: string;
  readonly error?: string;
  readonly after?: string;
}

const DAY_MS = 86_400_000;
const UNITS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: DAY_MS };

/** An instant from a field: an ISO 8601 instant, or an age before now (90m, 24h, 7d); undefined when empty. */
export function instantOf(text: string | undefined, now: number): number | undefined {
  const t = text?.trim() ?? '';
  if (t === '') return undefined;
  const ago = /^(\d+)(m|h|d)$/.exec(t);
  if (ago !== null) return now - Number(ago[1]) * (UNITS[ago[2] ?? 'h'] ?? 0);
  const ms = Date.parse(t);
  if (!Number.isFinite(ms)) throw new RangeError(`"${t}" is neither an ISO 8601 instant nor an age such as 24h`);
  return ms;
}

/** The filter a query names: the last day unless it says otherwise. */
export function filterOf(q: DeliveryQuery, now: number): DeliveryFilter {
  const sinceMs = instantOf(q.since, now) ?? now - DAY_MS;
  const untilMs = instantOf(q.until, now) ?? now + 60_000;
  return {
    sinceMs,
    untilMs,
    ...(q.route === undefined || q.route === '' ? {} : { route: q.route }),
    ...(q.status === undefined || q.status === '' ? {} : { status: q.status }),
    ...(q.key === undefined || q.key === '' ? {} : { keyPrefix: q.key }),
    ...(q.error === undefined || q.error === '' ? {} : { errorContains: q.error }),
  };
}

function option(value: string, label: string, selected: string | undefined): SafeHtml {
  return value === (selected ?? '') ? html`<option value="${value}" selected>${label}</option>` : html`<option value="${value}">${label}</option>`;
}

function filterForm(q: DeliveryQuery, routes: readonly string[]): SafeHtml {
  return html`<form class="filters" method="get" action="/deliveries" role="search" aria-label="Filter deliveries">
<label>Route<select name="route">${option('', 'every route', q.route)}${routes.map((r) => option(r, r, q.route))}</select></label>
<label>Status<select name="status">${option('', 'any', q.status)}${Object.values(RECORD_STATUS).map((s) => option(s, s, q.status))}</select></label>
<label>Since (ISO or age, e.g. 24h)<input name="since" value="${q.since ?? ''}" placeholder="24h"></label>
<label>Until (ISO or age)<input name="until" value="${q.until ?? ''}" placeholder="now"></label>
<label>Key starts with<input name="key" value="${q.key ?? ''}"></label>
<label>Last error contains<input name="error" value="${q.error ?? ''}"></label>
<button type="submit">Filter</button></form>`;
}

function openForm(routes: readonly string[]): SafeHtml {
  return html`<form class="filters" method="get" action="/delivery" aria-label="Open a delivery by its key">
<label>Route<select name="route">${routes.map((r) => option(r, r, undefined))}</select></label>
<label>Exact key<input name="key" required></label><button type="submit">Open</button></form>`;
}

function rowsTable(p: DeliveryPage): SafeHtml {
  if (p.rows.length === 0) return html`<p>No delivery matches on this page.</p>`;
  return html`<div class="scroll"><table><thead><tr><th scope="col">received (UTC)</th><th scope="col">route</th><th scope="col">key</th><th scope="col">status</th><th scope="col" class="num">attempts</th><th scope="col">last error</th></tr></thead><tbody>
${p.rows.map((r) => html`<tr><td>${when(r.receivedAt)}</td><td>${r.route}</td><td class="mono"><a href="/delivery${query({ route: r.route, key: r.key })}">${r.key}</a></td><td><span class="badge s-${r.status}">${r.status}</span></td><td class="num">${r.attempts ?? ''}</td><td>${r.lastError ?? ''}</td></tr>`)}
</tbody></table></div>`;
}

/** The deliveries' <main>. */
export function deliveriesMain(q: DeliveryQuery, routes: readonly string[], p: DeliveryPage | { readonly error: string }): SafeHtml {
  const { after: _after, ...filters } = q;
  const body = 'error' in p ? html`<p class="notice warn" role="alert">${p.error}</p>` : html`${rowsTable(p)}
<p>${p.next === undefined ? html`<span class="muted">The start of the range: no older delivery.</span>` : html`<a href="/deliveries${query({ ...filters, after: p.next })}" rel="next">Older deliveries</a>`}
${q.after === undefined ? '' : html` · <a href="/deliveries${query(filters)}">Newest</a>`}</p>`;
  return html`${filterForm(q, routes)}
<div class="actions"><a href="/confirm/redrive-filter${query({ route: q.route, since: q.since, until: q.until, key: q.key, error: q.error })}">Redrive the FAILED deliveries of this filter…</a></div>
${body}<h2>Open one delivery</h2>${openForm(routes)}`;
}
