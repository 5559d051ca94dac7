import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidSigningSecretError } from '../../lambdas/domain/signatures/signing-secret-error.ts';
import {
  createStandardWebhooksVerifier,
  signStandardWebhooks,
} from '../../lambdas/domain/signatures/standard-webhooks.ts';
import { BODY, deliveryOf, NOW, whsec } from './deliveries.ts';

const CURRENT = whsec(0x11);
const PREVIOUS = whsec(0x22);
const verifier = createStandardWebhooksVerifier();

const headersWith = (signature: string, id = 'msg_1', timestamp = String(NOW)) => ({
  'webhook-id': id,
  'webhook-timestamp': timestamp,
  'webhook-signature': signature,
});

describe('standard-webhooks verifier', () => {
  it('accepts a header with several signatures when only the second one matches', () => {
    // Prepare: a sender mid-rotation signs with its old secret (unknown to us) and its new one
    const header = `${signStandardWebhooks(whsec(0x44), 'msg_1', NOW, BODY)} ${signStandardWebhooks(CURRENT, 'msg_1', NOW, BODY)}`;
    // Act
    const result = verifier.verify(deliveryOf(headersWith(header), BODY), [CURRENT]);
    // Assess
    expect(header.split(' ')).toHaveLength(2);
    expect(result).toEqual({ ok: true });
  });

  it('refuses a header with several signatures when none matches', () => {
    const header = `${signStandardWebhooks(whsec(0x44), 'msg_1', NOW, BODY)} ${signStandardWebhooks(whsec(0x55), 'msg_1', NOW, BODY)}`;
    expect(verifier.verify(deliveryOf(headersWith(header), BODY), [CURRENT, PREVIOUS])).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
  });

  it('skips versions it does not know and unreadable entries beside a good one', () => {
    // Prepare: a v1a entry must hold a 64-byte ed25519 signature, so this 32-byte digest is
    // unreadable there; the v2 entry carries a valid digest on purpose
    const good = signStandardWebhooks(CURRENT, 'msg_1', NOW, BODY);
    const digest = good.slice(3);
    const header = `v1a,${digest} v2,${digest} v1,not-base64!  v1 ${good}`;
    // Act
    const result = verifier.verify(deliveryOf(headersWith(header), BODY), [CURRENT]);
    // Assess
    expect(result).toEqual({ ok: true });
  });

  it('does not accept a valid digest under a version other than v1', () => {
    const digest = signStandardWebhooks(CURRENT, 'msg_1', NOW, BODY).slice(3);
    expect(verifier.verify(deliveryOf(headersWith(`v2,${digest}`), BODY), [CURRENT])).toEqual({
      ok: false,
      reason: 'malformed-signature',
    });
  });

  it('binds the signature to the webhook-id: a different id is a bad signature', () => {
    const headers = headersWith(signStandardWebhooks(CURRENT, 'msg_1', NOW, BODY), 'msg_2');
    expect(verifier.verify(deliveryOf(headers, BODY), [CURRENT])).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it.each(['1.8e9', '-1800000000', '0x6b49d200', '1800000000abc', '1 800 000 000', '18000000000000'])(
    'answers malformed-signature for the timestamp %j, which parseInt would half-read',
    (timestamp) => {
      const headers = headersWith(signStandardWebhooks(CURRENT, 'msg_1', NOW, BODY), 'msg_1', timestamp);
      expect(verifier.verify(deliveryOf(headers, BODY), [CURRENT])).toEqual({ ok: false, reason: 'malformed-signature' });
    },
  );

  it('keys the HMAC with the base64-decoded secret, not with its text', () => {
    // Prepare: an independent signature keyed with the secret's text, the classic mistake
    const wrong = createHmac('sha256', CURRENT).update(`msg_1.${NOW}.`).update(BODY).digest('base64');
    const right = createHmac('sha256', Buffer.alloc(32, 0x11)).update(`msg_1.${NOW}.`).update(BODY).digest('base64');
    // Act
    const wrongResult = verifier.verify(deliveryOf(headersWith(`v1,${wrong}`), BODY), [CURRENT]);
    const rightResult = verifier.verify(deliveryOf(headersWith(`v1,${right}`), BODY), [CURRENT]);
    // Assess
    expect(wrongResult).toEqual({ ok: false, reason: 'bad-signature' });
    expect(rightResult).toEqual({ ok: true });
  });

  it('accepts a secret given without its whsec_ prefix', () => {
    const headers = headersWith(signStandardWebhooks(CURRENT, 'msg_1', NOW, BODY));
    expect(verifier.verify(deliveryOf(headers, BODY), [CURRENT.slice('whsec_'.length)])).toEqual({ ok: true });
  });

  it('throws InvalidSigningSecretError for a secret that is not base64, even when another secret matches', () => {
    const headers = headersWith(signStandardWebhooks(CURRENT, 'msg_1', NOW, BODY));
    expect(() => verifier.verify(deliveryOf(headers, BODY), [CURRENT, 'whsec_not base64!'])).toThrow(
      InvalidSigningSecretError,
    );
    expect(() => verifier.verify(deliveryOf(headers, BODY), ['whsec_'])).toThrow(InvalidSigningSecretError);
  });

  it('never puts the secret in the error message', () => {
    // Prepare
    const secret = 'whsec_this-is-the-secret!';
    const headers = headersWith(signStandardWebhooks(CURRENT, 'msg_1', NOW, BODY));
    // Act
    let thrown: unknown;
    try {
      verifier.verify(deliveryOf(headers, BODY), [secret]);
    } catch (err) {
      thrown = err;
    }
    // Assess
    expect(thrown).toBeInstanceOf(InvalidSigningSecretError);
    expect((thrown as Error).message).not.toContain('this-is-the-secret');
  });
});
