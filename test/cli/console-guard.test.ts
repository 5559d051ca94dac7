/** The console's guard (cli/console/guard.ts): the token, the Host, and the origin of a change. */
import { describe, expect, it } from 'vitest';
import { checkRequest, cookieName } from '../../cli/console/guard.ts';
import type { GuardedRequest } from '../../cli/console/guard.ts';

const PORT = 4800;
const OPTIONS = { token: 't0k3n', port: PORT };
const HOST = `127.0.0.1:${PORT}`;

function request(overrides: Partial<GuardedRequest> & { readonly headers?: GuardedRequest['headers'] } = {}): GuardedRequest {
  return { method: 'GET', url: '/', ...overrides, headers: { host: HOST, ...overrides.headers } };
}

describe('the console guard', () => {
  it('answers 401 without a token, and with a wrong one in the query, a cookie or a bearer header', () => {
    expect(checkRequest(request(), OPTIONS)).toMatchObject({ ok: false, status: 401 });
    expect(checkRequest(request({ url: '/?token=t0k3m' }), OPTIONS)).toMatchObject({ ok: false, status: 401 });
    expect(checkRequest(request({ headers: { cookie: `${cookieName(PORT)}=t0k3` } }), OPTIONS)).toMatchObject({ ok: false, status: 401 });
    expect(checkRequest(request({ headers: { authorization: 'Bearer nope' } }), OPTIONS)).toMatchObject({ ok: false, status: 401 });
  });

  it("does not take another console's cookie for its own", () => {
    expect(checkRequest(request({ headers: { cookie: `${cookieName(PORT + 1)}=t0k3n` } }), OPTIONS)).toMatchObject({ ok: false, status: 401 });
  });

  it('moves a token in the query into a cookie (HttpOnly, SameSite=Strict) and redirects to the URL without it', () => {
    const verdict = checkRequest(request({ url: '/deliveries?route=demo&token=t0k3n' }), OPTIONS);
    expect(verdict).toEqual({
      ok: true,
      setCookie: `${cookieName(PORT)}=t0k3n; Path=/; HttpOnly; SameSite=Strict`,
      redirect: '/deliveries?route=demo',
    });
  });

  it('lets a page through with the cookie or a bearer header, and no redirect', () => {
    expect(checkRequest(request({ headers: { cookie: `a=b; ${cookieName(PORT)}=t0k3n` } }), OPTIONS)).toEqual({ ok: true });
    expect(checkRequest(request({ headers: { authorization: 'Bearer t0k3n' } }), OPTIONS)).toEqual({ ok: true });
  });

  it('answers 421 to a Host that is not the console, even with the token (a rebound DNS name)', () => {
    expect(checkRequest(request({ url: '/?token=t0k3n', headers: { host: `evil.example:${PORT}` } }), OPTIONS)).toMatchObject({ ok: false, status: 421 });
    expect(checkRequest(request({ url: '/?token=t0k3n', headers: { host: '127.0.0.1:9999' } }), OPTIONS)).toMatchObject({ ok: false, status: 421 });
    expect(checkRequest(request({ url: '/?token=t0k3n', headers: { host: `localhost:${PORT}` } }), OPTIONS)).toMatchObject({ ok: true });
  });

  const post = (headers: GuardedRequest['headers']): GuardedRequest => request({ method: 'POST', url: '/action/pause', headers: { authorization: 'Bearer t0k3n', ...headers } });

  it('takes a POST from its own origin, or from a browser that says same-origin without an Origin', () => {
    expect(checkRequest(post({ origin: `http://${HOST}` }), OPTIONS)).toEqual({ ok: true });
    expect(checkRequest(post({ 'sec-fetch-site': 'same-origin' }), OPTIONS)).toEqual({ ok: true });
    expect(checkRequest(post({ origin: 'null', 'sec-fetch-site': 'same-origin' }), OPTIONS)).toEqual({ ok: true });
  });

  it('answers 403 to a POST from another origin, a cross-site one, or one that says nothing of where it comes from', () => {
    expect(checkRequest(post({ origin: 'http://evil.example' }), OPTIONS)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(post({ origin: `http://localhost:${PORT}` }), OPTIONS)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(post({ origin: 'http://evil.example', 'sec-fetch-site': 'same-origin' }), OPTIONS)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(post({ 'sec-fetch-site': 'cross-site' }), OPTIONS)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(post({ origin: 'null' }), OPTIONS)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(post({}), OPTIONS)).toMatchObject({ ok: false, status: 403 });
  });

  it('answers 405 to a change that is not a POST, and 401 before that without the token', () => {
    expect(checkRequest(request({ method: 'DELETE', headers: { authorization: 'Bearer t0k3n', origin: `http://${HOST}` } }), OPTIONS)).toMatchObject({ ok: false, status: 405 });
    expect(checkRequest(request({ method: 'POST', headers: { origin: `http://${HOST}` } }), OPTIONS)).toMatchObject({ ok: false, status: 401 });
  });
});
