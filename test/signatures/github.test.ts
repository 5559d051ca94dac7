import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createGithubVerifier } from '../../lambdas/domain/signatures/github.ts';
import { BODY, deliveryOf } from './deliveries.ts';

const SECRET = 'github-secret';
const verifier = createGithubVerifier();
const hex = createHmac('sha256', SECRET).update(BODY).digest('hex');
const check = (headers: Record<string, string>) => verifier.verify(deliveryOf(headers, BODY), [SECRET]);

describe('github verifier', () => {
  it('accepts upper-case hex, since hex digits carry no case', () => {
    expect(check({ 'x-hub-signature-256': `sha256=${hex.toUpperCase()}` })).toEqual({ ok: true });
  });

  it('requires the sha256= prefix', () => {
    expect(check({ 'x-hub-signature-256': hex })).toEqual({ ok: false, reason: 'malformed-signature' });
    expect(check({ 'x-hub-signature-256': `sha1=${hex}` })).toEqual({ ok: false, reason: 'malformed-signature' });
  });

  it('does not fall back to the legacy SHA-1 X-Hub-Signature header', () => {
    const sha1 = createHmac('sha1', SECRET).update(BODY).digest('hex');
    expect(check({ 'x-hub-signature': `sha1=${sha1}` })).toEqual({ ok: false, reason: 'missing-signature' });
  });

  it('answers malformed-signature for a digest one hex digit short', () => {
    expect(check({ 'x-hub-signature-256': `sha256=${hex.slice(1)}` })).toEqual({ ok: false, reason: 'malformed-signature' });
  });
});
