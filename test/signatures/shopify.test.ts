import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createShopifyVerifier } from '../../lambdas/domain/signatures/shopify.ts';
import { BODY, deliveryOf } from './deliveries.ts';

const SECRET = 'shopify-client-secret';
const verifier = createShopifyVerifier();
const digest = createHmac('sha256', SECRET).update(BODY).digest();
const check = (value: string) => verifier.verify(deliveryOf({ 'x-shopify-hmac-sha256': value }, BODY), [SECRET]);

describe('shopify verifier', () => {
  it('accepts the base64 digest', () => {
    expect(check(digest.toString('base64'))).toEqual({ ok: true });
  });

  it('answers malformed-signature for the same digest in hex', () => {
    expect(check(digest.toString('hex'))).toEqual({ ok: false, reason: 'malformed-signature' });
  });

  it('answers malformed-signature for base64url or unpadded base64', () => {
    expect(check(digest.toString('base64url'))).toEqual({ ok: false, reason: 'malformed-signature' });
    expect(check(digest.toString('base64').replace(/=$/, ''))).toEqual({ ok: false, reason: 'malformed-signature' });
  });
});
