/**
 * The console's actions, each through the use case of its CLI verb and after a confirmation page
 * that says what will happen: redrive one delivery and redrive by filter (`redrive`, its dry run
 * shown first), pause and resume (`routes pause|resume`), skip an ordered line's head (`order skip`),
 * and the DLQ's redrive (`dlq redrive`). A confirmation is a GET that changes nothing; the change
 * is the POST its form sends (the guard holds it to the console's own origin).
 */
import { createBulkRedrive } from '../../lambdas/routes/bulk-redrive.ts';
import type { RedrivePreview, RedriveSelection } from '../../lambdas/routes/bulk-redrive.ts';
import { createLineControl } from '../../lambdas/routes/line-control.ts';
import { createRouteControl } from '../../lambdas/routes/route-control.ts';
import { redriveDeadLetters } from '../operations/dead-letters.ts';
import { inspectDelivery } from '../operations/inspect-delivery.ts';
import { operatorOptionsOf } from '../target.ts';
import type { Target } from '../target.ts';
import { instantOf } from './deliveries-page.ts';
import { html, query, when } from './html.ts';
import type { SafeHtml } from './html.ts';

/** Redrives a second from the console, as the CLI's default. */
const REDRIVE_RATE = 50;

/** A confirmation or a result: a title and the <main>. */
export interface Screen {
  readonly title: string;
  readonly main: SafeHtml;
}

/** An action's request the operator cannot mean: shown as the page's message, with status 400. */
export class ActionRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ActionRefused';
  }
}

type Params = Readonly<Record<string, string | undefined>>;

function known(target: Target, route: string | undefined): string {
  if (route === undefined || !target.routes.includes(route)) throw new ActionRefused(`unknown route "${route ?? ''}"; the routes: ${target.routes.join(', ')}`);
  return route;
}

function confirmForm(action: string, params: Params, label: string, danger = false, extra: SafeHtml | string = ''): SafeHtml {
  return html`<form method="post" action="/action/${action}">${Object.entries(params).map(([n, v]) => (v === undefined ? '' : html`<input type="hidden" name="${n}" value="${v}">`))}
${extra}<div class="actions"><button type="submit"${danger ? html` class="danger"` : ''}>${label}</button><a href="/">Cancel</a></div></form>`;
}

/** The selection a filter names, as `retryproof redrive` builds it. */
function filterSelection(target: Target, p: Params, now: number): RedriveSelection {
  const routes = p.route === undefined || p.route === '' ? target.routes : [known(target, p.route)];
  const sinceMs = instantOf(p.since, now);
  const untilMs = instantOf(p.until, now);
  const s: RedriveSelection = {
    routes,
    ...(sinceMs === undefined ? {} : { sinceMs }),
    ...(untilMs === undefined ? {} : { untilMs }),
    ...(p.error === undefined || p.error === '' ? {} : { errorContains: p.error }),
    ...(p.key === undefined || p.key === '' ? {} : { keyPrefix: p.key }),
  };
  if (Object.keys(s).length === 1 && (p.route === undefined || p.route === '')) throw new ActionRefused('say what to redrive: a route, a time band, a key prefix or error text');
  return s;
}

/** One delivery's selection: its route, its key as prefix, its instant of receipt; checked to name it alone. */
async function oneSelection(target: Target, p: Params, now: number): Promise<{ selection: RedriveSelection; preview: RedrivePreview }> {
  const route = known(target, p.route);
  const key = p.key ?? '';
  const record = (await inspectDelivery(target, route, key, { now })).record;
  if (record === null) throw new ActionRefused(`no record of ${route}/${key}`);
  const selection: RedriveSelection = { routes: [route], keyPrefix: key, sinceMs: record.receivedAt, untilMs: record.receivedAt + 1 };
  const preview = await createBulkRedrive(operatorOptionsOf(target, () => now)).preview(selection);
  if (preview.count !== 1 || preview.first[0]?.key !== key) throw new ActionRefused(`${route}/${key} is ${record.status}, not FAILED: there is nothing to redrive`);
  return { selection, preview };
}

function previewTable(preview: RedrivePreview): SafeHtml {
  if (preview.first.length === 0) return html``;
  return html`<div class="scroll"><table><caption class="muted">The earliest ${preview.first.length} of the selection</caption><thead><tr><th scope="col">route</th><th scope="col">key</th><th scope="col">received (UTC)</th><th scope="col" class="num">runs</th><th scope="col">last error</th></tr></thead><tbody>
${preview.first.map((r) => html`<tr><td>${r.route}</td><td class="mono">${r.key}</td><td>${when(r.receivedAt)}</td><td class="num">${r.runs}</td><td>${r.lastError ?? ''}</td></tr>`)}</tbody></table></div>`;
}

/** The confirmation page of an action: what will happen, and the form that does it. */
export async function confirmScreen(target: Target, action: string, p: Params, now: number): Promise<Screen> {
  switch (action) {
    case 'redrive': {
      const { preview } = await oneSelection(target, p, now);
      return { title: 'Redrive one delivery', main: html`<p>Redrive <span class="mono">${p.route} / ${p.key}</span>: it runs once more, with a fresh budget of attempts. Its DLQ copy stays there and is harmless.</p>${previewTable(preview)}${confirmForm('redrive', { route: p.route, key: p.key }, 'Redrive it')}` };
    }
    case 'redrive-filter': {
      const selection = filterSelection(target, p, now);
      const preview = await createBulkRedrive(operatorOptionsOf(target, () => now)).preview(selection);
      const perRoute = Object.entries(preview.byRoute).map(([r, n]) => `${r} ${n}`).join(', ');
      return { title: 'Redrive by filter', main: html`<p class="notice">Dry run: <strong><span data-testid="dry-run-count">${preview.count}</span> FAILED deliver${preview.count === 1 ? 'y' : 'ies'}</strong> would run once more (${perRoute}). Nothing has changed yet.</p>${previewTable(preview)}${preview.count === 0 ? '' : confirmForm('redrive-filter', { route: p.route, since: p.since, until: p.until, key: p.key, error: p.error }, `Redrive ${preview.count}`, true)}` };
    }
    case 'pause': {
      const route = known(target, p.route);
      return { title: `Pause ${route}`, main: html`<p>Pause route <strong>${route}</strong>: its deliveries are still accepted and answered, and their work is parked, not lost, until the route is resumed.</p>${confirmForm('pause', { route }, `Pause ${route}`, true, html`<label>Reason (shown on the overview)<input name="reason" value="paused from the console"></label>`)}` };
    }
    case 'resume': {
      const route = known(target, p.route);
      return { title: `Resume ${route}`, main: html`<p>Resume route <strong>${route}</strong>: it becomes active, and every parked delivery of it is sent again, each to run once.</p>${confirmForm('resume', { route }, `Resume ${route}`)}` };
    }
    case 'skip': {
      const route = known(target, p.route);
      return { title: 'Skip the head of a line', main: html`<p>Move the line of <span class="mono">${p.entity ?? ''}</span> on route ${route} past its FAILED head. The skipped delivery stays FAILED; the next one is woken.</p>${confirmForm('skip', { route, entity: p.entity }, 'Skip the head', true)}` };
    }
    case 'dlq-redrive':
      return { title: 'Redrive the DLQ', main: html`<p>Send every DLQ message back to its work queue. Work that completed meanwhile is acknowledged as a duplicate, never run twice.</p>${confirmForm('dlq-redrive', {}, 'Redrive the DLQ', true)}` };
    default:
      throw new ActionRefused(`no such action: ${action}`);
  }
}

/** Runs a confirmed action and says what it did. */
export async function runAction(target: Target, action: string, p: Params, now: () => number): Promise<Screen> {
  const options = operatorOptionsOf(target, now);
  switch (action) {
    case 'redrive': {
      const { selection } = await oneSelection(target, p, now());
      const out = await createBulkRedrive(options).run(selection, { ratePerSecond: REDRIVE_RATE });
      return { title: 'Redriven', main: html`<p role="status">${out.redriven === 1 ? 'Redriven: it runs once more.' : 'Not redriven: it was no longer FAILED.'}</p><p><a href="/delivery${query({ route: p.route, key: p.key })}">Back to the delivery</a></p>` };
    }
    case 'redrive-filter': {
      const out = await createBulkRedrive(options).run(filterSelection(target, p, now()), { ratePerSecond: REDRIVE_RATE });
      return { title: 'Redriven', main: html`<p role="status"><span data-testid="redriven">${out.redriven}</span> redriven of ${out.total} selected${out.skipped > 0 ? `; ${out.skipped} skipped (no longer FAILED)` : ''}${out.unsendable > 0 ? `; ${out.unsendable} kept no payload (use the DLQ's redrive)` : ''}.</p><p><a href="/deliveries${query({ route: p.route, since: p.since, until: p.until, key: p.key })}">Back to the deliveries</a></p>` };
    }
    case 'pause': {
      const route = known(target, p.route);
      const paused = await createRouteControl(options).pause(route, p.reason === '' ? undefined : p.reason);
      return { title: `Pause ${route}`, main: html`<p role="status">${paused ? `Route ${route} paused.` : `Route ${route} was already paused.`}</p><p><a href="/">Back to the overview</a></p>` };
    }
    case 'resume': {
      const route = known(target, p.route);
      const out = await createRouteControl(options).resume(route);
      return { title: `Resume ${route}`, main: html`<p role="status">${out.resumed ? `Route ${route} resumed` : `Route ${route} was not paused`}; ${out.reenqueued} parked deliver${out.reenqueued === 1 ? 'y' : 'ies'} sent again.</p><p><a href="/">Back to the overview</a></p>` };
    }
    case 'skip': {
      const route = known(target, p.route);
      const out = await createLineControl(options).skipHead(route, p.entity ?? '');
      const said = out.kind === 'refused' ? `Refused: ${out.reason}` : out.kind === 'skipped' ? `Skipped ${out.skipped.key}; ${out.woken === undefined ? 'nothing waited parked' : `woke ${out.woken.key}`}.` : 'The head had completed or was gone: the line moved past it.';
      return { title: 'Skip the head of a line', main: html`<p role="status">${said}</p><p><a href="/line${query({ route, entity: p.entity })}">Back to the line</a></p>` };
    }
    case 'dlq-redrive': {
      const out = await redriveDeadLetters(target);
      return { title: 'DLQ redriven', main: html`<p role="status">${out.moved} message${out.moved === 1 ? '' : 's'} sent back${out.unrunnable.length === 0 ? '' : `; ${out.unrunnable.length} kept (route not in the running configuration)`}${out.status === undefined ? '' : ` (move task ${out.status})`}.</p><p><a href="/dlq">Back to the DLQ</a></p>` };
    }
    default:
      throw new ActionRefused(`no such action: ${action}`);
  }
}
