import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSlackVerifier } from '../../lambdas/domain/signatures/slack.ts';
import { BODY, deliveryOf, NOW } from './deliveries.ts';

const SECRET = 'slack-signing-secret';
const verifier = createSlackVerifier();
const hex = createHmac('sha256', SECRET).update(`v0:${NOW}:`).update(BODY).digest('hex');
const check = (signature: string, timestamp = String(NOW)) =>
  verifier.verify(deliveryOf({ 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature }, BODY), [SECRET]);

describe('slack verifier', () => {
  it('accepts v0=<hex> over v0:<timestamp>:<body>', () => {
    expect(check(`v0=${hex}`)).toEqual({ ok: true });
  });

  it('answers malformed-signature for another version prefix', () => {
    expect(check(`v1=${hex}`)).toEqual({ ok: false, reason: 'malformed-signature' });
  });

  it('answers malformed-signature for a fractional timestamp', () => {
    expect(check(`v0=${hex}`, `${NOW}.5`)).toEqual({ ok: false, reason: 'malformed-signature' });
  });
});
