/**
 * Signed sample deliveries, as each scheme's sender would send them, for `npm run send`
 * and the storm. The key goes where the scheme's sender puts its id; a route with a key
 * template gets an `Idempotency-Key` header and an `id` in the body, which covers the
 * usual templates' inputs, not every template. On GitHub, Shopify and hmac-sha256 the
 * receiver's key is the body's hash (`recordKeyFor`), not the id the sender names.
 */
import { randomUUID } from 'node:crypto';
import type { SignatureConfig } from '../lambdas/config/route-config.ts';
import { signDelivery } from '../lambdas/domain/signatures/sign-delivery.ts';
import { fingerprint } from '../lambdas/domain/fingerprint.ts';
import { BODY_KEY_PREFIX, keyIsBodyHash } from '../lambdas/domain/idempotency-key.ts';

export interface SampleRoute {
  readonly name: string;
  readonly signature: SignatureConfig;
}

export interface SignedRequest {
  readonly headers: Record<string, string>;
  /** The exact bytes that were signed. */
  readonly body: string;
}

/** A new key in the shape the route's scheme uses. */
export function newKey(route: SampleRoute): string {
  const id = randomUUID();
  switch (route.signature.scheme) {
    case 'standard-webhooks':
      return `msg_${id}`;
    case 'stripe':
      return `evt_${id.replace(/-/g, '')}`;
    case 'slack':
      return `Ev${id.replace(/-/g, '').slice(0, 16).toUpperCase()}`;
    case 'github':
      return `123456:${id}`;
    default:
      return id;
  }
}

/** The JSON document of a delivery: the payload, with the key where the scheme keeps it in the body. */
export function sampleBody(route: SampleRoute, key: string, payload: Readonly<Record<string, unknown>>): string {
  switch (route.signature.scheme) {
    case 'stripe':
      return JSON.stringify({ id: key, object: 'event', ...payload });
    case 'slack':
      return JSON.stringify({ event_id: key, ...payload });
    case 'standard-webhooks':
      return JSON.stringify(payload);
    case 'github':
    case 'shopify':
    case 'hmac-sha256':
      // These schemes key on the body's hash: the id in the body makes two keys two bodies.
      return JSON.stringify({ id: key, ...payload });
  }
}

/**
 * The headers that carry `key` where the scheme's sender puts its id. Standard Webhooks
 * signs its id into the signature headers instead; Stripe and Slack carry it in the body.
 */
export function keyHeadersFor(scheme: SampleRoute['signature']['scheme'], key: string): Record<string, string> {
  switch (scheme) {
    case 'github': {
      const [hook = '', guid = ''] = key.split(':');
      return { 'x-github-hook-id': hook, 'x-github-delivery': guid };
    }
    case 'shopify':
      return { 'x-shopify-webhook-id': key };
    case 'hmac-sha256':
      return { 'idempotency-key': key };
    default:
      return {};
  }
}

/**
 * Signs `body` for the route as its sender does at `nowSeconds`, with the key headers.
 * @throws InvalidSigningSecretError for a Standard Webhooks secret that is not base64
 */
export function signSample(route: SampleRoute, secret: string, key: string, body: string, nowSeconds: number): SignedRequest {
  const keyHeaders = keyHeadersFor(route.signature.scheme, key);
  const signed = signDelivery(route.signature, secret, Buffer.from(body), { nowSeconds, id: key });
  return { headers: { 'content-type': 'application/json', ...keyHeaders, ...signed }, body };
}

/**
 * The idempotency key the receiver derives for a sample: the sender's id, or the body's
 * hash on the schemes that sign the body only.
 */
export function recordKeyFor(route: SampleRoute & { readonly key?: string }, key: string, body: string): string {
  return keyIsBodyHash(route.signature.scheme, route.key) ? `${BODY_KEY_PREFIX}${fingerprint(Buffer.from(body))}` : key;
}

/** A route's webhook URL from a base URL: the stack's ApiUrl, the local stack's URL, or a full webhook URL. */
export function webhookUrl(base: string, route: string): string {
  const url = new URL(base);
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/webhooks\/[^/]+$/.test(path)) return url.toString();
  url.pathname = path.endsWith('/webhooks') ? `${path}/${encodeURIComponent(route)}` : `${path}/webhooks/${encodeURIComponent(route)}`;
  return url.toString();
}
