import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createStripeVerifier, signStripe } from '../../lambdas/domain/signatures/stripe.ts';
import { BODY, deliveryOf, NOW } from './deliveries.ts';

const CURRENT = 'whsec_current0123456789abcdefghij';
const verifier = createStripeVerifier();
const v1 = (secret: string, t = NOW, body = BODY) =>
  createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
const check = (header: string, secrets = [CURRENT]) =>
  verifier.verify(deliveryOf({ 'stripe-signature': header }, BODY), secrets);

describe('stripe verifier', () => {
  it('accepts a header with several v1 signatures when only the second one matches', () => {
    // Prepare: Stripe rolling its endpoint secret sends one v1 per active secret
    const header = `t=${NOW},v1=${v1('whsec_rolled_away')},v1=${v1(CURRENT)}`;
    // Act
    const result = check(header);
    // Assess
    expect(result).toEqual({ ok: true });
  });

  it('ignores v0 entries, even when they carry a valid digest', () => {
    expect(check(`t=${NOW},v0=${v1(CURRENT)}`)).toEqual({ ok: false, reason: 'malformed-signature' });
    expect(check(`t=${NOW},v0=${v1(CURRENT)},v1=${v1('whsec_other')}`)).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('ignores unknown schemes and unreadable v1 entries beside a good one', () => {
    expect(check(`t=${NOW},v9=abc,v1=potato,junk,v1=${v1(CURRENT)}`)).toEqual({ ok: true });
  });

  it('accepts the items in any order and with spaces after the commas', () => {
    expect(check(`v1=${v1(CURRENT)}, t=${NOW}`)).toEqual({ ok: true });
  });

  it('answers malformed-signature when the header carries two timestamps', () => {
    // Which of the two was signed is ambiguous, so neither is trusted.
    expect(check(`t=${NOW},t=${NOW + 1},v1=${v1(CURRENT)}`)).toEqual({ ok: false, reason: 'malformed-signature' });
  });

  it.each([`v1=${'a'.repeat(64)}`, `t=,v1=${'a'.repeat(64)}`, `t=soon,v1=${'a'.repeat(64)}`, `t=${NOW}`])(
    'answers malformed-signature for %j',
    (header) => {
      expect(check(header)).toEqual({ ok: false, reason: 'malformed-signature' });
    },
  );

  it('uses the whole whsec_ secret as the UTF-8 key, without decoding it', () => {
    // Prepare: a signature keyed with the base64-decoded remainder, the Standard Webhooks way
    const decodedKey = Buffer.from(CURRENT.slice('whsec_'.length), 'base64');
    const decodedWay = createHmac('sha256', decodedKey).update(`${NOW}.`).update(BODY).digest('hex');
    // Act
    const result = check(`t=${NOW},v1=${decodedWay}`);
    // Assess
    expect(result).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('signs with the t it puts in the header', () => {
    expect(signStripe(CURRENT, NOW, BODY)).toBe(`t=${NOW},v1=${v1(CURRENT)}`);
  });
});
