/**
 * What every scheme promises the ingest, whatever its header format: genuine deliveries pass,
 * anything altered or unsigned is refused with a reason, a rotation keeps both secrets
 * working, and nothing the sender controls makes the verifier throw.
 */
import { describe, expect, it } from 'vitest';
import { createVerifier } from '../../lambdas/domain/signatures/create-verifier.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { InvalidSigningSecretError } from '../../lambdas/domain/signatures/signing-secret-error.ts';
import { BODY, deliveryOf, heldSecret, NOW, SCHEME_CASES } from './deliveries.ts';

/** Header values no scheme can read: wrong shape, wrong alphabet, truncated, control characters. */
const GARBAGE = ['garbage', 'v1,', 'sha256=', 't=,v1=', 'v0=zz', '\u0000\u0001', '====', '🙂🙂🙂', 'x'.repeat(5000)];

describe.each(SCHEME_CASES)('$name verifier', (c) => {
  const verifier = createVerifier(c.config);
  /** What the route holds: the same secrets, or for v1a the public keys of the sender's signing keys. */
  const secrets = [heldSecret(c, c.current), heldSecret(c, c.previous)];
  const signed = (secret: string, body = BODY, at = NOW) => signDelivery(c.config, secret, body, { nowSeconds: at, id: 'msg_1' });

  it('names its scheme', () => {
    expect(verifier.scheme).toBe(c.config.scheme);
  });

  it('accepts a delivery signed with the current secret', () => {
    // Act
    const result = verifier.verify(deliveryOf(signed(c.current), BODY), secrets);
    // Assess
    expect(result).toEqual({ ok: true });
  });

  it('accepts a delivery signed with the previous secret while both are configured', () => {
    const result = verifier.verify(deliveryOf(signed(c.previous), BODY), secrets);
    expect(result).toEqual({ ok: true });
  });

  it('refuses a delivery signed with the previous secret once it is retired', () => {
    const result = verifier.verify(deliveryOf(signed(c.previous), BODY), [heldSecret(c, c.current)]);
    expect(result).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('refuses a body changed after signing', () => {
    // Prepare: one digit of the amount changed, same length
    const headers = signed(c.current);
    const tampered = Buffer.from(BODY.toString('utf8').replace('1700', '9700'));
    // Act
    const result = verifier.verify(deliveryOf(headers, tampered), secrets);
    // Assess
    expect(tampered.equals(BODY)).toBe(false);
    expect(result).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('refuses a delivery signed with a secret it does not hold', () => {
    const result = verifier.verify(deliveryOf(signed(c.foreign), BODY), secrets);
    expect(result).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it.each(c.requiredHeaders)('answers missing-signature without the %s header', (name) => {
    // Prepare
    const headers = Object.fromEntries(Object.entries(signed(c.current)).filter(([key]) => key !== name));
    // Act
    const result = verifier.verify(deliveryOf(headers, BODY), secrets);
    // Assess
    expect(result).toEqual({ ok: false, reason: 'missing-signature' });
  });

  it.each(c.requiredHeaders)('answers missing-signature when the %s header is empty', (name) => {
    const headers = { ...signed(c.current), [name]: '  ' };
    expect(verifier.verify(deliveryOf(headers, BODY), secrets)).toEqual({ ok: false, reason: 'missing-signature' });
  });

  it('answers missing-signature for a delivery with no headers at all', () => {
    expect(verifier.verify(deliveryOf({}, BODY), secrets)).toEqual({ ok: false, reason: 'missing-signature' });
  });

  it.each(c.parsedHeaders)('answers malformed-signature, without throwing, for garbage in the %s header', (name) => {
    for (const garbage of GARBAGE) {
      // Prepare
      const headers = { ...signed(c.current), [name]: garbage };
      // Act
      const result = verifier.verify(deliveryOf(headers, BODY), secrets);
      // Assess
      expect(result, `${name}: ${JSON.stringify(garbage.slice(0, 20))}`).toEqual({ ok: false, reason: 'malformed-signature' });
    }
  });

  it('reads header names in lowercase only, as API Gateway v2 delivers them', () => {
    // Prepare: the same headers with the sender's capitalisation, which API Gateway v2 would have lowercased
    const capitalised = Object.fromEntries(
      Object.entries(signed(c.current)).map(([k, v]) => [k.replace(/(^|-)([a-z])/g, (m) => m.toUpperCase()), v]),
    );
    // Act
    const result = verifier.verify(deliveryOf(capitalised, BODY), secrets);
    // Assess
    expect(result).toEqual({ ok: false, reason: 'missing-signature' });
  });

  it('throws InvalidSigningSecretError, not a refusal, when it is given no secret or an empty one', () => {
    const delivery = deliveryOf(signed(c.current), BODY);
    expect(() => verifier.verify(delivery, [])).toThrow(InvalidSigningSecretError);
    expect(() => verifier.verify(delivery, [heldSecret(c, c.current), ''])).toThrow(InvalidSigningSecretError);
  });

  if (c.timestamped) {
    it('refuses a genuine delivery signed more than 300 s ago as stale-timestamp', () => {
      const result = verifier.verify(deliveryOf(signed(c.current, BODY, NOW - 301), BODY), secrets);
      expect(result).toEqual({ ok: false, reason: 'stale-timestamp' });
    });

    it('refuses a genuine delivery timestamped more than 300 s in the future as stale-timestamp', () => {
      const result = verifier.verify(deliveryOf(signed(c.current, BODY, NOW + 301), BODY), secrets);
      expect(result).toEqual({ ok: false, reason: 'stale-timestamp' });
    });

    it('accepts a delivery exactly 300 s off in either direction', () => {
      expect(verifier.verify(deliveryOf(signed(c.current, BODY, NOW - 300), BODY), secrets)).toEqual({ ok: true });
      expect(verifier.verify(deliveryOf(signed(c.current, BODY, NOW + 300), BODY), secrets)).toEqual({ ok: true });
    });

    it('uses the route tolerance when one is configured', () => {
      // Prepare
      const strict = createVerifier({ ...c.config, toleranceSeconds: 10 } as typeof c.config);
      // Act
      const within = strict.verify(deliveryOf(signed(c.current, BODY, NOW - 10), BODY), secrets);
      const beyond = strict.verify(deliveryOf(signed(c.current, BODY, NOW - 11), BODY), secrets);
      // Assess
      expect(within).toEqual({ ok: true });
      expect(beyond).toEqual({ ok: false, reason: 'stale-timestamp' });
    });

    it('reports a forged old delivery as bad-signature, keeping stale-timestamp for genuine replays', () => {
      const result = verifier.verify(deliveryOf(signed(c.foreign, BODY, NOW - 3600), BODY), secrets);
      expect(result).toEqual({ ok: false, reason: 'bad-signature' });
    });

    it('refuses a timestamp moved after signing', () => {
      // Prepare: a genuine delivery whose timestamp header is then bumped by one second
      const headers = signed(c.current);
      const moved = Object.fromEntries(
        Object.entries(headers).map(([k, v]) => [k, k.endsWith('timestamp') ? String(NOW + 1) : v.replace(`t=${NOW}`, `t=${NOW + 1}`)]),
      );
      // Act
      const result = verifier.verify(deliveryOf(moved, BODY), secrets);
      // Assess
      expect(JSON.stringify(moved)).toContain(String(NOW + 1));
      expect(result).toEqual({ ok: false, reason: 'bad-signature' });
    });
  } else {
    it('has no timestamp to check, so a day-old genuine delivery still verifies (the idempotency record stops its replay)', () => {
      const result = verifier.verify(deliveryOf(signed(c.current, BODY, NOW - 86_400), BODY, NOW), secrets);
      expect(result).toEqual({ ok: true });
    });
  }
});
