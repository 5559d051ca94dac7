/**
 * The console's HTTP server: loopback only, every request through the guard (guard.ts), then
 * one handler per screen. Pages are rendered here on the server; the one script only refreshes
 * a live page. Nothing here writes to the receiver but the actions' POSTs (actions.ts).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LineSelectionError, createLineControl } from '../../lambdas/routes/line-control.ts';
import { peekDeadLetters } from '../operations/dead-letters.ts';
import { inspectDelivery } from '../operations/inspect-delivery.ts';
import { recentDeliveries } from '../operations/recent-deliveries.ts';
import { operatorOptionsOf } from '../target.ts';
import type { Target } from '../target.ts';
import { ActionRefused, confirmScreen, runAction } from './actions.ts';
import { CONSOLE_SCRIPT, CONSOLE_SCRIPT_PATH, CONSOLE_STYLE, CONSOLE_STYLE_PATH } from './assets.ts';
import { deliveriesMain, filterOf } from './deliveries-page.ts';
import type { DeliveryQuery } from './deliveries-page.ts';
import { deliveryMain } from './delivery-page.ts';
import { dlqMain, lineMain } from './dlq-page.ts';
import { checkRequest } from './guard.ts';
import { html, page } from './html.ts';
import type { PageOptions, SafeHtml } from './html.ts';
import { readOverview } from './overview.ts';
import { overviewMain } from './overview-page.ts';

/** Deliveries a page lists. */
export const PAGE_SIZE = 50;
/** DLQ messages the DLQ screen lists at most. */
const DLQ_SHOWN = 100;

export interface ConsoleOptions {
  readonly target: Target;
  readonly token: string;
  /** @default 0: a free port */
  readonly port?: number;
  readonly now: () => number;
}

export interface RunningConsole {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  readonly port: number;
  close(): Promise<void>;
}

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the console's own forms.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
} as const;

type Params = Record<string, string | undefined>;

interface Answer {
  readonly status?: number;
  readonly type?: string;
  readonly body: string;
}

function send(res: ServerResponse, answer: Answer, extra: Record<string, string> = {}): void {
  res.writeHead(answer.status ?? 200, { ...SECURITY_HEADERS, 'content-type': answer.type ?? 'text/html; charset=utf-8', ...extra });
  res.end(answer.body);
}

function paramsOf(search: URLSearchParams): Params {
  const out: Params = {};
  for (const [name, value] of search) out[name] = value;
  return out;
}

async function formOf(req: IncomingMessage): Promise<Params> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 65_536) throw new ActionRefused('the form is too large');
    chunks.push(chunk as Buffer);
  }
  return paramsOf(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

function json(value: unknown): Answer {
  return { type: 'application/json; charset=utf-8', body: JSON.stringify(value) };
}

/** The answer to a GET of a screen or an API path; undefined for a path the console does not have. */
async function getAnswer(o: ConsoleOptions, path: string, p: Params): Promise<Answer | undefined> {
  const t = o.target;
  const now = o.now();
  const framed = (options: Omit<PageOptions, 'target'>, main: SafeHtml): Answer => ({ body: page({ ...options, target: t.description }, main) });
  switch (path) {
    case CONSOLE_STYLE_PATH:
      return { type: 'text/css; charset=utf-8', body: CONSOLE_STYLE };
    case CONSOLE_SCRIPT_PATH:
      return { type: 'text/javascript; charset=utf-8', body: CONSOLE_SCRIPT };
    case '/':
      return framed({ title: 'Overview', nav: 'overview', refreshSeconds: 10 }, overviewMain(await readOverview(t, now)));
    case '/api/overview':
      return json(await readOverview(t, now));
    case '/deliveries':
    case '/api/deliveries': {
      const q = p as DeliveryQuery;
      let listed;
      try {
        listed = await recentDeliveries(t, filterOf(q, now), { limit: PAGE_SIZE, ...(q.after === undefined ? {} : { after: q.after }) });
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
        listed = { error: err.message };
      }
      if (path === '/api/deliveries') return 'error' in listed ? { ...json(listed), status: 400 } : json(listed);
      return framed({ title: 'Deliveries', nav: 'deliveries' }, deliveriesMain(q, t.routes, listed));
    }
    case '/delivery':
    case '/api/delivery': {
      const route = p.route ?? '';
      const key = p.key ?? '';
      const withBody = p.body === '1';
      const found = await inspectDelivery(t, route, key, { withBody, now });
      if (path === '/api/delivery') return json(found);
      const dead = found.record?.status === 'FAILED' ? (await peekDeadLetters(t, { max: DLQ_SHOWN })).find((r) => r.route === route && r.key === key) : undefined;
      return framed({ title: 'Delivery', nav: 'none', ...(withBody ? {} : { refreshSeconds: 5 }) }, deliveryMain(route, key, found, dead, now, withBody));
    }
    case '/dlq':
      return framed({ title: 'DLQ', nav: 'dlq', refreshSeconds: 10 }, dlqMain(await peekDeadLetters(t, { max: DLQ_SHOWN }), DLQ_SHOWN, now));
    case '/line': {
      const line = p.route !== undefined && p.entity !== undefined && p.entity !== '' ? await createLineControl(operatorOptionsOf(t, o.now)).showLine(p.route, p.entity) : undefined;
      return framed({ title: 'Ordered line', nav: 'line' }, lineMain(t.routes, p.route, p.entity, line));
    }
    default:
      if (path.startsWith('/confirm/')) {
        const screen = await confirmScreen(t, path.slice('/confirm/'.length), p, now);
        return framed({ title: screen.title, nav: 'none' }, screen.main);
      }
      return undefined;
  }
}

async function handle(o: ConsoleOptions, port: number, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const verdict = checkRequest({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }, { token: o.token, port });
  if (!verdict.ok) {
    send(res, { status: verdict.status, type: 'text/plain; charset=utf-8', body: `${verdict.status}: ${verdict.reason}\n` });
    return;
  }
  if (verdict.redirect !== undefined) {
    send(res, { status: 303, body: '' }, { location: verdict.redirect, ...(verdict.setCookie === undefined ? {} : { 'set-cookie': verdict.setCookie }) });
    return;
  }
  const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
  const framed = (title: string, main: SafeHtml, status = 200): Answer => ({ status, body: page({ title, nav: 'none', target: o.target.description }, main) });
  try {
    if (req.method === 'POST') {
      if (!url.pathname.startsWith('/action/')) {
        send(res, { status: 404, type: 'text/plain; charset=utf-8', body: '404: no such action\n' });
        return;
      }
      const screen = await runAction(o.target, url.pathname.slice('/action/'.length), await formOf(req), o.now);
      send(res, framed(screen.title, screen.main));
      return;
    }
    const answer = await getAnswer(o, url.pathname, paramsOf(url.searchParams));
    send(res, answer ?? framed('Not found', html`<p>The console has no page ${url.pathname}. <a href="/">The overview</a></p>`, 404));
  } catch (err) {
    const refused = err instanceof ActionRefused || err instanceof LineSelectionError;
    const message = err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err);
    send(res, framed(refused ? 'Refused' : 'Error', html`<p class="notice warn" role="alert">${message}</p><p><a href="/">The overview</a></p>`, refused ? 400 : 500));
  }
}

/** Starts the console on 127.0.0.1 and resolves once it listens. */
export async function startConsole(o: ConsoleOptions): Promise<RunningConsole> {
  let port = 0;
  const server: Server = createServer((req, res) => {
    handle(o, port, req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, { status: 500, type: 'text/plain; charset=utf-8', body: `500: ${String(err)}\n` });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Loopback only: the console acts with the operator's credentials, for the operator alone.
    server.listen(o.port ?? 0, '127.0.0.1', () => {
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => {
        resolve();
      });
    }),
  };
}
