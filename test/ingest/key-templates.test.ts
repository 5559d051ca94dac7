/**
 * Key templates: `{header:name}`, `{body:/json/pointer}` and constants, as a route author
 * writes them, and the answers a sender gets when its delivery does not fit.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RouteConfig } from '../../lambdas/config/route-config.ts';
import { MalformedBodyError, InvalidKeyError } from '../../lambdas/domain/errors.ts';
import { fingerprint } from '../../lambdas/domain/fingerprint.ts';
import { keySourceFor } from '../../lambdas/domain/idempotency-key.ts';
import type { SignatureSchemeName } from '../../lambdas/config/route-config.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { ingestFixture, SCHEME_ROUTES } from '../support/ingest-fixture.ts';

/** The key a template derives from these headers and this body (parsed lazily, as ingest does). */
function keyOf(template: string | undefined, body: string, headers: Record<string, string> = {}, scheme: SignatureSchemeName = 'stripe'): string {
  return keySourceFor(scheme, template)({
    headers,
    json: () => {
      try {
        return JSON.parse(body) as unknown;
      } catch (err) {
        throw new MalformedBodyError('The body is not valid JSON.', { cause: err });
      }
    },
    fingerprint: () => fingerprint(Buffer.from(body)),
  });
}

function configError(route: Partial<RouteConfig>): string {
  const base: RouteConfig = { name: 'orders', signature: { scheme: 'stripe' }, secretName: 's/orders', action: 'payout', actionTimeSeconds: 5 };
  try {
    resolveConfig({ demo: true, routes: [{ ...base, ...route }] });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('resolveConfig accepted the route');
}

describe('a key template', () => {
  it('joins constants, body fields and signed headers in order', () => {
    const body = JSON.stringify({ order: { id: 'o-17' } });
    expect(keyOf('eu1_{body:/order/id}', body)).toBe('eu1_o-17');
    expect(keyOf('{header:webhook-id}:{body:/order/id}', body, { 'webhook-id': 'msg_1' }, 'standard-webhooks')).toBe('msg_1:o-17');
  });

  it('unescapes ~1 to "/" and ~0 to "~" in a pointer (RFC 6901)', () => {
    const body = JSON.stringify({ 'a/b': { 'c~d': 'x1' } });
    expect(keyOf('{body:/a~1b/c~0d}', body)).toBe('x1');
  });

  it('indexes arrays by position and reads numbers as their decimal text', () => {
    const body = JSON.stringify({ items: [{ sku: 'first' }, { sku: 'second' }], amount: 1250 });
    expect(keyOf('{body:/items/1/sku}-{body:/amount}', body)).toBe('second-1250');
  });

  it('refuses a missing field, an object, a boolean, an empty string and an array index out of range with 400 naming the field', () => {
    const body = JSON.stringify({ order: { id: '' }, nested: { a: 1 }, flag: true, items: [] });
    for (const pointer of ['/missing', '/nested', '/flag', '/order/id', '/items/0', '/items/-']) {
      const err = (() => {
        try {
          keyOf(`{body:${pointer}}`, body);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err, pointer).toBeInstanceOf(InvalidKeyError);
      expect((err as InvalidKeyError).status).toBe(400);
      expect((err as Error).message).toContain(`the body field ${pointer} is missing`);
    }
  });

  it('refuses a body field of a body that is not JSON with 400 malformed-body', () => {
    expect(() => keyOf('{body:/id}', 'id=7&amount=3')).toThrow(MalformedBodyError);
  });

  it('keys a body-only scheme on the body hash by default, JSON or not', () => {
    expect(keyOf(undefined, 'id=7&amount=3', {}, 'hmac-sha256')).toBe(`sha256:${fingerprint(Buffer.from('id=7&amount=3'))}`);
    expect(keyOf(undefined, '{"a":1}', { 'x-github-delivery': 'anything' }, 'github')).toBe(`sha256:${fingerprint(Buffer.from('{"a":1}'))}`);
  });
});

describe('a key template at synth', () => {
  it('is refused, naming the route, when a brace is unmatched, a placeholder unknown or nothing varies', () => {
    expect(configError({ key: 'eu1_{body:/id' })).toMatch(/^route "orders": key "eu1_\{body:\/id" is not a valid template: unexpected brace/);
    expect(configError({ key: '{query:id}' })).toMatch(/route "orders": .*unexpected brace/);
    expect(configError({ key: 'constant' })).toMatch(/route "orders": .*at least one \{header:\.\.\.\} or \{body:\.\.\.\} placeholder/);
    expect(configError({ key: '{body:id}' })).toMatch(/route "orders": .*body pointer "id" must start with "\/"/);
  });

  it('is refused when it reads a header the scheme does not sign, with what to use instead', () => {
    const github = configError({ signature: { scheme: 'github' }, key: '{header:x-github-delivery}' });
    expect(github).toMatch(/^route "orders": key "\{header:x-github-delivery\}" reads the header x-github-delivery, which the github signature does not cover/);
    expect(github).toContain('{body:/pointer}');
    const hmac = configError({ signature: { scheme: 'hmac-sha256', header: 'x-signature' }, key: '{header:idempotency-key}' });
    expect(hmac).toContain('which the hmac-sha256 signature does not cover');
    const standard = configError({ signature: { scheme: 'standard-webhooks' }, key: '{header:x-tenant}-{header:webhook-id}' });
    expect(standard).toContain('or the signed header webhook-id,');
  });

  it('accepts signed headers and body fields on every scheme', () => {
    const ok = (route: Partial<RouteConfig>) =>
      resolveConfig({ demo: true, routes: [{ name: 'orders', signature: { scheme: 'stripe' }, secretName: 's/orders', action: 'payout', actionTimeSeconds: 5, ...route }] });
    expect(ok({ signature: { scheme: 'standard-webhooks' }, key: 'us_{header:webhook-id}' }).routes[0]?.key).toBe('us_{header:webhook-id}');
    expect(ok({ signature: { scheme: 'shopify' }, key: '{body:/id}' }).routes[0]?.key).toBe('{body:/id}');
  });
});

describe('the ingest handler on a route with a key template', () => {
  const hmac = SCHEME_ROUTES.find((r) => r.name === 'hmac-sha256');
  if (hmac === undefined) throw new Error('no hmac test route');
  const route = { ...hmac, name: 'hmac-sha256', key: 'order-{body:/order/id}' };
  const post = (body: string) => ({
    route: 'hmac-sha256',
    body,
    headers: { 'content-type': 'application/json', ...signDelivery(hmac.signature, hmac.secret, Buffer.from(body), { nowSeconds: Math.floor(Date.now() / 1000) }) },
  });

  it('answers 202 with the templated key, 400 naming a missing field, and 400 to a body that is not JSON', async () => {
    // Prepare
    const fx = await ingestFixture({ routes: [route] });
    const id = `o-${Date.now()}`;
    // Act
    const accepted = await fx.invoke(post(JSON.stringify({ order: { id } })));
    const missing = await fx.invoke(post(JSON.stringify({ order: {} })));
    const notJson = await fx.invoke(post('order=1'));
    // Assess
    expect(accepted.statusCode).toBe(202);
    expect(JSON.parse(accepted.body ?? '{}')).toEqual({ id: `hmac-sha256/order-${id}`, status: 'accepted' });
    expect(missing.statusCode).toBe(400);
    expect(JSON.parse(missing.body ?? '{}')).toMatchObject({ detail: 'The idempotency key was not found: the body field /order/id is missing.' });
    expect(notJson.statusCode).toBe(400);
    expect(JSON.parse(notJson.body ?? '{}')).toMatchObject({ title: 'Malformed request body' });
  });
});

describe('keepHeaders at synth', () => {
  it('refuses the reserved object keys, which the record could not hold', () => {
    for (const header of ['constructor', '__proto__', 'prototype']) {
      expect(configError({ keepHeaders: [header] })).toBe(`route "orders": keepHeaders[0] "${header}" cannot be kept (a reserved object key)`);
    }
  });
});
