import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createHmacSha256Verifier } from '../../lambdas/domain/signatures/hmac-sha256.ts';
import { BODY, deliveryOf } from './deliveries.ts';

const SECRET = 'generic-secret';
const digest = createHmac('sha256', SECRET).update(BODY).digest();

describe('hmac-sha256 verifier', () => {
  it('defaults to hex with no prefix', () => {
    const verifier = createHmacSha256Verifier({ header: 'x-signature' });
    expect(verifier.verify(deliveryOf({ 'x-signature': digest.toString('hex') }, BODY), [SECRET])).toEqual({ ok: true });
  });

  it('reads the configured header in lowercase, whatever case the route wrote it in', () => {
    const verifier = createHmacSha256Verifier({ header: 'X-Partner-Signature', encoding: 'base64' });
    const headers = { 'x-partner-signature': digest.toString('base64') };
    expect(verifier.verify(deliveryOf(headers, BODY), [SECRET])).toEqual({ ok: true });
  });

  it('requires the configured prefix, case included', () => {
    const verifier = createHmacSha256Verifier({ header: 'x-signature', prefix: 'hmac-sha256=' });
    const check = (value: string) => verifier.verify(deliveryOf({ 'x-signature': value }, BODY), [SECRET]);
    expect(check(`hmac-sha256=${digest.toString('hex')}`)).toEqual({ ok: true });
    expect(check(`HMAC-SHA256=${digest.toString('hex')}`)).toEqual({ ok: false, reason: 'malformed-signature' });
    expect(check(digest.toString('hex'))).toEqual({ ok: false, reason: 'malformed-signature' });
  });

  it('answers malformed-signature for a hex digest on a base64 route', () => {
    const verifier = createHmacSha256Verifier({ header: 'x-signature', encoding: 'base64' });
    const result = verifier.verify(deliveryOf({ 'x-signature': digest.toString('hex') }, BODY), [SECRET]);
    expect(result).toEqual({ ok: false, reason: 'malformed-signature' });
  });
});
