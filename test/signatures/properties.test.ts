/**
 * Properties over random bodies, secrets and headers: what is signed verifies, any single
 * changed byte does not, and no header a sender can invent makes a verifier throw.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVerifier } from '../../lambdas/domain/signatures/create-verifier.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import type { VerifyFailure } from '../../lambdas/domain/signatures/signature-verifier.ts';
import { deliveryOf, heldSecret, NOW, SCHEME_CASES } from './deliveries.ts';
import type { SchemeCase } from './deliveries.ts';

const REASONS: readonly VerifyFailure[] = ['missing-signature', 'malformed-signature', 'bad-signature', 'stale-timestamp'];

const anyCase = fc.constantFrom(...SCHEME_CASES);
const body = (minLength: number) => fc.uint8Array({ minLength, maxLength: 2048 }).map((bytes) => Buffer.from(bytes));
const whsecOf = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => `whsec_${Buffer.from(bytes).toString('base64')}`);
/** Any 32 bytes are an ed25519 seed. */
const whskOf = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => `whsk_${Buffer.from(bytes).toString('base64')}`);
/**
 * A key in the scheme's own format the sender signs with: whsec_ base64 of random bytes, a
 * whsk_ seed where the case holds ed25519 public keys, or any non-empty text.
 */
const secretFor = (c: SchemeCase) => {
  if (c.config.scheme !== 'standard-webhooks') return fc.string({ minLength: 1, maxLength: 64, unit: 'binary' });
  return c.held === undefined ? whsecOf : fc.oneof(whsecOf, whskOf);
};
const messageId = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);

/** Header values a fuzzer or an attacker might send: free text, and text built from the schemes' own tokens. */
const headerValue = fc.oneof(
  fc.string({ maxLength: 200, unit: 'binary' }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom('v1,', 'v1a,', 'v1=', 'v0=', 't=', 'sha256=', ',', ' ', '=', '==', String(NOW), '-', '.'),
        fc.stringMatching(/^[0-9a-f]{0,70}$/),
        // Up to 90 characters, so 64-byte (v1a) shapes reach the ed25519 verify too.
        fc.stringMatching(/^[A-Za-z0-9+/]{0,90}={0,2}$/),
      ),
      { maxLength: 12 },
    )
    .map((tokens) => tokens.join('')),
);

describe('every verifier, on random input', () => {
  it('accepts what signDelivery signed, for any body, secret and message id', () => {
    fc.assert(
      fc.property(
        anyCase.chain((c) => fc.tuple(fc.constant(c), secretFor(c), body(0), messageId)),
        ([c, secret, rawBody, id]) => {
          const headers = signDelivery(c.config, secret, rawBody, { nowSeconds: NOW, id });
          const result = createVerifier(c.config).verify(deliveryOf(headers, rawBody), [heldSecret(c, secret)]);
          expect(result).toEqual({ ok: true });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses the delivery when any single byte of the body is changed', () => {
    fc.assert(
      fc.property(
        anyCase.chain((c) => fc.tuple(fc.constant(c), secretFor(c), body(1), fc.nat(), fc.integer({ min: 1, max: 255 }))),
        ([c, secret, rawBody, position, mask]) => {
          // Prepare
          const headers = signDelivery(c.config, secret, rawBody, { nowSeconds: NOW, id: 'msg_1' });
          const changed = Buffer.from(rawBody);
          const index = position % changed.length;
          changed[index] = changed[index]! ^ mask;
          // Act
          const result = createVerifier(c.config).verify(deliveryOf(headers, changed), [heldSecret(c, secret)]);
          // Assess
          expect(result).toEqual({ ok: false, reason: 'bad-signature' });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never throws for any header values, and never accepts them', () => {
    fc.assert(
      fc.property(
        anyCase.chain((c) =>
          fc.tuple(
            fc.constant(c),
            fc.record(Object.fromEntries(c.requiredHeaders.map((name) => [name, fc.option(headerValue, { nil: undefined })]))),
          ),
        ),
        body(0),
        ([c, headers], rawBody) => {
          const result = createVerifier(c.config).verify(deliveryOf(headers, rawBody), [heldSecret(c, c.current), heldSecret(c, c.previous)]);
          expect(result.ok).toBe(false);
          expect(REASONS).toContain(result.ok ? undefined : result.reason);
        },
      ),
      { numRuns: 500 },
    );
  });
});
