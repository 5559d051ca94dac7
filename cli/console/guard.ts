/**
 * Who may use the console: the holder of its token, on loopback, and for a change of state only
 * from the console's own pages. Pure, so each rule has a unit test (test/cli/console-guard.test.ts).
 *
 * - Host must name the console itself (127.0.0.1 or localhost and its port): a page of another
 *   site that rebinds its DNS name to 127.0.0.1 sends its own Host, and is refused.
 * - The token comes in the query (the URL the CLI prints), a cookie (set on that first visit, so
 *   links and the page's refreshes carry no token) or `Authorization: Bearer`. Without it: 401.
 * - A change (anything but GET and HEAD) must be a POST whose Origin is the console's, or, from
 *   a browser that sends no Origin (or `null`), whose Sec-Fetch-Site is same-origin. Cross-site: 403.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export interface GuardedRequest {
  readonly method: string;
  /** The request target: path and query. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
}

export type Verdict =
  | { readonly ok: true; readonly setCookie?: string; readonly redirect?: string }
  | { readonly ok: false; readonly status: 401 | 403 | 405 | 421; readonly reason: string };

/** The cookie that carries the token after the first visit: one per port, so two consoles do not clash. */
export function cookieName(port: number): string {
  return `retryproof_console_${port}`;
}

function header(request: GuardedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? (value[0] as string | undefined) : (value as string | undefined);
}

/** Compares digests, so neither the length nor a prefix of the token leaks through timing. */
function sameToken(given: string, token: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

function cookieToken(request: GuardedRequest, port: number): string | undefined {
  const cookies = header(request, 'cookie') ?? '';
  const wanted = `${cookieName(port)}=`;
  for (const part of cookies.split(';')) {
    const c = part.trim();
    if (c.startsWith(wanted)) return decodeURIComponent(c.slice(wanted.length));
  }
  return undefined;
}

function bearer(request: GuardedRequest): string | undefined {
  const auth = header(request, 'authorization');
  return auth?.startsWith('Bearer ') === true ? auth.slice('Bearer '.length) : undefined;
}

/** Whether a change comes from the console's own pages. */
function sameOrigin(request: GuardedRequest, host: string): boolean {
  const origin = header(request, 'origin');
  if (origin !== undefined && origin !== 'null') return origin === `http://${host}`;
  // A browser that hides the origin (`null`: a privacy setting) still says where the request comes from.
  return header(request, 'sec-fetch-site') === 'same-origin';
}

/** The verdict on one request; see the module's comment for the rules. */
export function checkRequest(request: GuardedRequest, options: { readonly token: string; readonly port: number }): Verdict {
  const host = header(request, 'host') ?? '';
  if (host !== `127.0.0.1:${options.port}` && host !== `localhost:${options.port}`) {
    return { ok: false, status: 421, reason: `this console answers only as 127.0.0.1:${options.port}` };
  }
  const url = new URL(request.url, `http://${host}`);
  const fromQuery = url.searchParams.get('token') ?? undefined;
  const given = fromQuery ?? bearer(request) ?? cookieToken(request, options.port);
  if (given === undefined || !sameToken(given, options.token)) {
    return { ok: false, status: 401, reason: 'open the URL the console printed: it carries the token' };
  }
  const method = request.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') {
    if (method !== 'POST') return { ok: false, status: 405, reason: 'a change is a POST' };
    if (!sameOrigin(request, host)) return { ok: false, status: 403, reason: 'a change must come from the console\'s own pages' };
    return { ok: true };
  }
  if (fromQuery === undefined) return { ok: true };
  // The first visit: the token moves into a cookie, and out of the address bar and history.
  url.searchParams.delete('token');
  return {
    ok: true,
    setCookie: `${cookieName(options.port)}=${encodeURIComponent(options.token)}; Path=/; HttpOnly; SameSite=Strict`,
    redirect: `${url.pathname}${url.search}`,
  };
}
