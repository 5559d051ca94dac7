/** The overview screen's HTML: a card per route, then the DLQ and the reconciler. */
import { age, html, query, when } from './html.ts';
import type { SafeHtml } from './html.ts';
import type { LastRunReport } from '../../lambdas/ports/reconciler-store.ts';
import type { Overview, RouteOverview } from './overview.ts';
import { DLQ_PEEK } from './overview.ts';

function stateLine(r: RouteOverview): SafeHtml {
  const s = r.state;
  if (s.state === 'active') return html`<span class="badge s-active">active</span>${s.resumedAt === undefined ? '' : html` <span class="muted">since ${when(s.resumedAt)}</span>`}`;
  return html`<span class="badge s-paused">paused</span> <span class="muted">since ${when(s.pausedAt)} by ${s.pausedBy ?? 'someone'}</span>
<p>Why: ${s.reason ?? 'no reason given'}${s.key === undefined ? '' : html` (key <span class="mono">${s.key}</span>${s.repeats === undefined ? '' : `, ${s.repeats} of ${s.threshold ?? '?'} repeats`})`}</p>`;
}

/** Duplicates and breaker trips over the hour and the day, or where they are for a deployed receiver. */
function ingestFacts(r: RouteOverview): SafeHtml {
  const c = r.ingest;
  if (c === undefined) return html`<dt>duplicates, breaker trips</dt><dd>on the receiver's CloudWatch dashboard</dd>`;
  return html`<dt>duplicates</dt><dd><span data-testid="duplicates-hour">${c.hour.duplicates}</span> / <span data-testid="duplicates-day">${c.day.duplicates}</span> <span class="muted">(hour / day)</span></dd>
<dt>breaker trips</dt><dd><span data-testid="trips-hour">${c.hour.breakerTrips}</span> / <span data-testid="trips-day">${c.day.breakerTrips}</span> <span class="muted">(hour / day)</span></dd>`;
}

function routeCard(r: RouteOverview, now: number): SafeHtml {
  const route = r.state.route;
  const failedLink = (n: number, sinceMs: number): SafeHtml => html`<a href="/deliveries${query({ route, status: 'FAILED', since: new Date(sinceMs).toISOString() })}">${n}</a>`;
  const q = r.queue;
  return html`<section class="card" aria-labelledby="route-${route}"><h2 id="route-${route}">${route}</h2>
<p>${stateLine(r)}</p>
<div class="scroll"><table><caption class="muted">Deliveries received</caption>
<thead><tr><th scope="col">window</th><th scope="col" class="num">received</th><th scope="col" class="num">completed</th><th scope="col" class="num">failed</th></tr></thead>
<tbody><tr><th scope="row">last hour</th><td class="num">${r.hour.received}</td><td class="num">${r.hour.completed}</td><td class="num">${failedLink(r.hour.failed, now - 3_600_000)}</td></tr>
<tr><th scope="row">last day</th><td class="num">${r.day.received}</td><td class="num">${r.day.completed}</td><td class="num">${failedLink(r.day.failed, now - 86_400_000)}</td></tr></tbody></table></div>
<dl class="facts">
${ingestFacts(r)}
<dt>queue</dt><dd>${q === undefined ? '-' : html`${q.queue} (${q.kind === 'route' ? 'its own' : 'shared'}): ${q.visible} waiting, ${q.inFlight} running`}</dd>
<dt>rate-limited backlog</dt><dd>${q === undefined ? '-' : q.delayed}</dd>
<dt>in the DLQ</dt><dd>${r.deadLetters}${r.oldestDeadLetterAt === undefined ? '' : `, the oldest ${age(now - r.oldestDeadLetterAt)} old`}</dd>
</dl>
<div class="actions"><a href="/deliveries${query({ route })}">Its deliveries</a>
<a href="/confirm/${r.state.state === 'paused' ? 'resume' : 'pause'}${query({ route })}">${r.state.state === 'paused' ? 'Resume' : 'Pause'} ${route}…</a></div>
</section>`;
}

function reconcilerPart(o: Overview): SafeHtml {
  const c = o.reconciler;
  if (c === undefined) return o.lastRun === undefined ? html`<p>The reconciler has not run yet.</p>` : html`<dl class="facts">${lastRunPart(o.lastRun)}</dl>`;
  return html`<dl class="facts"><dt>window</dt><dd>${when(c.fromMs)} to ${when(c.toMs)}</dd>
<dt>runs on it</dt><dd>${c.runs}</dd><dt>where it stands</dt><dd>${c.position.phase}${c.position.phase === 'done' ? ' (the window is reconciled)' : ''}</dd>
${c.keysLost ? html`<dt>note</dt><dd>a run stopped inside the window: the effects check reads it again</dd>` : ''}${lastRunPart(o.lastRun)}</dl>`;
}

/** What the last run that worked on a window found, from its cursor. */
function lastRunPart(last: LastRunReport | undefined): SafeHtml {
  if (last === undefined) return html``;
  const n = (name: string): number => last.counts[name] ?? 0;
  return html`<dt>last run</dt><dd data-testid="last-run">${when(last.startedAt)} UTC, ${((last.endedAt - last.startedAt) / 1000).toFixed(1)} s${last.stoppedEarly ? ', stopped early (the next run goes on)' : ''}</dd>
<dt>it found</dt><dd data-testid="last-run-found">${n('scanned')} records looked at; ${n('reenqueued')} stuck re-enqueued; ${n('reversed')} duplicate effects reversed; ${n('missing')} effects missing; ${n('orphans')} ledger entries without a record; ${n('failed')} FAILED; ${n('parked')} parked; ${n('needsAttention')} for people</dd>`;
}

/** The overview's <main>. */
export function overviewMain(o: Overview): SafeHtml {
  const dlq = o.dlq;
  const oldest = o.routes.map((r) => r.oldestDeadLetterAt).filter((t): t is number => t !== undefined);
  return html`<p class="muted">Read at ${when(o.at)} UTC; refreshed every 10 s while shown.</p>
<div class="cards">${o.routes.map((r) => routeCard(r, o.at))}</div>
<h2>DLQ</h2><p>${dlq === undefined ? '-' : html`${dlq.visible + dlq.inFlight} message${dlq.visible + dlq.inFlight === 1 ? '' : 's'}`}${oldest.length === 0 ? '' : `; the oldest ${age(o.at - Math.min(...oldest))} old`}${o.peeked >= DLQ_PEEK ? ` (ages of the first ${DLQ_PEEK} seen)` : ''}. <a href="/dlq">Open the DLQ</a></p>
<h2>Reconciler</h2>${reconcilerPart(o)}`;
}
