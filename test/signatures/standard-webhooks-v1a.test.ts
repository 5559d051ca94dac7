/**
 * Standard Webhooks v1a: ed25519 over `${id}.${timestamp}.${body}`, checked with a `whpk_`
 * public key. Signatures here are made with node:crypto's ed25519 directly (never through
 * signStandardWebhooks), so the verifier is held to an independent computation.
 *
 * Vectors: the spec (standard-webhooks/standard-webhooks, spec/standard-webhooks.md, "Webhook
 * headers") shows a `v1a,` entry beside a `v1,` one but publishes neither key, so it gives no
 * usable v1a vector. The published pair used below comes from Cosium's
 * standard-webhooks-consumer (src/test/java/com/cosium/standard_webhooks_consumer/VerifierTest.java),
 * whose `whpk_` is the 44-byte DER SubjectPublicKeyInfo a Java KeyPairGenerator writes. Key
 * derivation is pinned to RFC 8032 section 7.1, TEST 1.
 */
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVerifier } from '../../lambdas/domain/signatures/create-verifier.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { InvalidSigningSecretError } from '../../lambdas/domain/signatures/signing-secret-error.ts';
import {
  generateStandardWebhooksKeyPair,
  standardWebhooksPublicKeyOf,
} from '../../lambdas/domain/signatures/standard-webhooks-keys.ts';
import { signStandardWebhooks } from '../../lambdas/domain/signatures/standard-webhooks.ts';
import { BODY, deliveryOf, NOW, whsec, whsk } from './deliveries.ts';

const verifier = createVerifier({ scheme: 'standard-webhooks' });

/** A key pair made by node:crypto, and the whpk_ a receiver would hold for it (raw 32 bytes). */
function keyPair(): { readonly privateKey: KeyObject; readonly whpk: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // The last 32 bytes of the DER SubjectPublicKeyInfo are the raw key.
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, whpk: `whpk_${raw.toString('base64')}` };
}

/** A `v1a,` entry computed with node:crypto directly. */
function v1a(privateKey: KeyObject, id = 'msg_1', timestamp = NOW, body = BODY): string {
  return `v1a,${sign(null, Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]), privateKey).toString('base64')}`;
}

const headersWith = (signature: string, id = 'msg_1', timestamp = String(NOW)) => ({
  'webhook-id': id,
  'webhook-timestamp': timestamp,
  'webhook-signature': signature,
});

const CURRENT = keyPair();
const PREVIOUS = keyPair();
const STRANGER = keyPair();

describe('standard-webhooks v1a against a published vector', () => {
  // Cosium standard-webhooks-consumer, VerifierTest.java ("Verify valid signature" and "Verify invalid signature").
  const id = '7a2486b3-31cf-4bd3-a460-df8845d16cd5';
  const timestamp = 1737987215;
  const body = Buffer.from('{"greetings": "Hello World"}');
  const spkiWhpk = 'whpk_MCowBQYDK2VwAyEAkp3dScDPIzT1CwUFUMdzyPbWOAQaCF9z4ucuKuZD7Io=';
  const whsecOfVector = 'whsec_b6Ovv5eS7H5seJrGSStBYDivs8v2/KrFjfMaVZYsi7w=';
  const validV1a = 'v1a,XVbiOe+IzCKsXBuhb52iHLroqxFJofJNMQRL80I2kWO0+kXu2gcqgXAzontxDDgpMDw6SMh4sjzr+67EmUUzDg==';
  const invalidV1a = 'v1a,J/b6YbswScYdpR1AvAXOM2HR/jdSzawexEQ+N/6dHBcKtvJFd9yivsCDkwVE6A1G2C9wFFwQENUhio5rNrpiAw==';
  const validV1 = 'v1,iayM3VaiYCEDP/CxWUFWcxUCJk2YmBDQHtHTsaHzrwo=';
  /** The same key as the raw 32 bytes, the form Svix and the spec's authors write. */
  const rawWhpk = `whpk_${Buffer.from(spkiWhpk.slice(5), 'base64').subarray(12).toString('base64')}`;
  const check = (signature: string, secrets: string[], messageBody = body) =>
    verifier.verify(deliveryOf(headersWith(signature, id, String(timestamp)), messageBody, timestamp + 60), secrets);

  it('accepts the valid v1a signature with the key in either encoding', () => {
    expect(check(validV1a, [spkiWhpk])).toEqual({ ok: true });
    expect(check(validV1a, [rawWhpk])).toEqual({ ok: true });
  });

  it('refuses its invalid v1a signature and its valid one for another body as bad-signature', () => {
    expect(check(invalidV1a, [rawWhpk])).toEqual({ ok: false, reason: 'bad-signature' });
    expect(check(validV1a, [rawWhpk], Buffer.from('{"greetings": "Hello"}'))).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('accepts one header carrying its v1 and v1a signatures with either secret alone', () => {
    const both = `${validV1} ${validV1a}`;
    expect(check(both, [whsecOfVector])).toEqual({ ok: true });
    expect(check(both, [rawWhpk])).toEqual({ ok: true });
    expect(check(both, [whsec(0x01), STRANGER.whpk])).toEqual({ ok: false, reason: 'bad-signature' });
  });
});

describe('standard-webhooks v1a verifier', () => {
  it('accepts a signature made with node:crypto ed25519', () => {
    const result = verifier.verify(deliveryOf(headersWith(v1a(CURRENT.privateKey)), BODY), [CURRENT.whpk]);
    expect(result).toEqual({ ok: true });
  });

  it('refuses a signature made with another key as bad-signature', () => {
    const result = verifier.verify(deliveryOf(headersWith(v1a(STRANGER.privateKey)), BODY), [CURRENT.whpk, PREVIOUS.whpk]);
    expect(result).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('refuses a forged signature: one flipped bit', () => {
    // Prepare
    const entry = v1a(CURRENT.privateKey);
    const bytes = Buffer.from(entry.slice(4), 'base64');
    bytes[10] = bytes[10]! ^ 0x01;
    // Act
    const result = verifier.verify(deliveryOf(headersWith(`v1a,${bytes.toString('base64')}`), BODY), [CURRENT.whpk]);
    // Assess
    expect(result).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('binds the signature to the webhook-id and the timestamp text', () => {
    const signed = v1a(CURRENT.privateKey, 'msg_1', NOW);
    expect(verifier.verify(deliveryOf(headersWith(signed, 'msg_2'), BODY), [CURRENT.whpk])).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verifier.verify(deliveryOf(headersWith(signed, 'msg_1', String(NOW + 1)), BODY), [CURRENT.whpk])).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
  });

  it('keeps accepting the previous public key during a rotation, and stops once it is retired', () => {
    const headers = headersWith(v1a(PREVIOUS.privateKey));
    expect(verifier.verify(deliveryOf(headers, BODY), [CURRENT.whpk, PREVIOUS.whpk])).toEqual({ ok: true });
    expect(verifier.verify(deliveryOf(headers, BODY), [CURRENT.whpk])).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('accepts a header with a v1 and a v1a entry on either secret, and on a rotation list mixing them', () => {
    // Prepare: a sender moving from HMAC to ed25519 signs with both during the switch
    const hmacSecret = whsec(0x5a);
    const header = `${signStandardWebhooks(hmacSecret, 'msg_1', NOW, BODY)} ${v1a(CURRENT.privateKey)}`;
    const check = (secrets: string[]) => verifier.verify(deliveryOf(headersWith(header), BODY), secrets);
    // Act, Assess
    expect(check([hmacSecret])).toEqual({ ok: true });
    expect(check([CURRENT.whpk])).toEqual({ ok: true });
    expect(check([STRANGER.whpk, hmacSecret])).toEqual({ ok: true });
    expect(check([CURRENT.whpk, whsec(0x5b)])).toEqual({ ok: true });
    expect(check([STRANGER.whpk, whsec(0x5b)])).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('accepts several v1a entries when only the last one matches', () => {
    const header = `${v1a(STRANGER.privateKey)} ${v1a(PREVIOUS.privateKey)} ${v1a(CURRENT.privateKey)}`;
    expect(verifier.verify(deliveryOf(headersWith(header), BODY), [CURRENT.whpk])).toEqual({ ok: true });
  });

  it('never lets a v1a signature pass for a whsec_ secret, nor a v1 digest for a whpk_ key', () => {
    // Only v1a entries, only an HMAC secret: the entries are well formed, none can match
    expect(verifier.verify(deliveryOf(headersWith(v1a(CURRENT.privateKey)), BODY), [whsec(0x5a)])).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
    const v1 = signStandardWebhooks(whsec(0x5a), 'msg_1', NOW, BODY);
    expect(verifier.verify(deliveryOf(headersWith(v1), BODY), [CURRENT.whpk])).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('refuses a genuine v1a signature more than 300 s old or ahead as stale-timestamp, after checking it', () => {
    const at = (timestamp: number) => deliveryOf(headersWith(v1a(CURRENT.privateKey, 'msg_1', timestamp), 'msg_1', String(timestamp)), BODY);
    expect(verifier.verify(at(NOW - 301), [CURRENT.whpk])).toEqual({ ok: false, reason: 'stale-timestamp' });
    expect(verifier.verify(at(NOW + 301), [CURRENT.whpk])).toEqual({ ok: false, reason: 'stale-timestamp' });
    expect(verifier.verify(at(NOW - 300), [CURRENT.whpk])).toEqual({ ok: true });
    expect(verifier.verify(at(NOW + 300), [CURRENT.whpk])).toEqual({ ok: true });
    // A forgery an hour old is a bad signature, not a stale one
    const forged = deliveryOf(headersWith(v1a(STRANGER.privateKey, 'msg_1', NOW - 3600), 'msg_1', String(NOW - 3600)), BODY);
    expect(verifier.verify(forged, [CURRENT.whpk])).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it.each([
    ['63 bytes', (s: string) => Buffer.from(s, 'base64').subarray(0, 63).toString('base64')],
    ['65 bytes', (s: string) => Buffer.concat([Buffer.from(s, 'base64'), Buffer.alloc(1)]).toString('base64')],
    ['no padding', (s: string) => s.replace(/=+$/, '')],
    ['base64url', (s: string) => Buffer.from(s, 'base64').toString('base64url')],
    ['a bad character', (s: string) => `${s.slice(0, 10)}!${s.slice(11)}`],
  ])('answers malformed-signature for a v1a entry of %s, and skips it beside a good one', (_, mangle) => {
    // Prepare
    const good = v1a(CURRENT.privateKey);
    const bad = `v1a,${mangle(good.slice(4))}`;
    // Act
    const alone = verifier.verify(deliveryOf(headersWith(bad), BODY), [CURRENT.whpk]);
    const beside = verifier.verify(deliveryOf(headersWith(`${bad} ${good}`), BODY), [CURRENT.whpk]);
    // Assess
    expect(bad).not.toBe(good);
    expect(alone).toEqual({ ok: false, reason: 'malformed-signature' });
    expect(beside).toEqual({ ok: true });
  });

  it('does not read a 64-byte signature under v1, nor a 32-byte digest under v1a', () => {
    const signature = v1a(CURRENT.privateKey).slice(4);
    const digest = signStandardWebhooks(whsec(0x5a), 'msg_1', NOW, BODY).slice(3);
    expect(verifier.verify(deliveryOf(headersWith(`v1,${signature}`), BODY), [CURRENT.whpk])).toEqual({
      ok: false,
      reason: 'malformed-signature',
    });
    expect(verifier.verify(deliveryOf(headersWith(`v1a,${digest}`), BODY), [whsec(0x5a)])).toEqual({
      ok: false,
      reason: 'malformed-signature',
    });
  });
});

describe('standard-webhooks v1a keys the verifier is given', () => {
  const headers = headersWith(v1a(CURRENT.privateKey));
  const raw = Buffer.from(CURRENT.whpk.slice(5), 'base64');

  it.each([
    ['31 bytes', `whpk_${raw.subarray(0, 31).toString('base64')}`],
    ['33 bytes', `whpk_${Buffer.concat([raw, Buffer.alloc(1)]).toString('base64')}`],
    ['text that is not base64', 'whpk_not a key!'],
    ['nothing after the prefix', 'whpk_'],
    // 44 bytes, but the DER header names X25519 (1.3.101.110), not Ed25519
    ['an X25519 SubjectPublicKeyInfo', `whpk_${Buffer.concat([Buffer.from('302a300506032b656e032100', 'hex'), raw]).toString('base64')}`],
  ])('throws InvalidSigningSecretError for a whpk_ of %s, even beside a key that matches', (_, bad) => {
    expect(() => verifier.verify(deliveryOf(headers, BODY), [CURRENT.whpk, bad])).toThrow(InvalidSigningSecretError);
  });

  it('throws InvalidSigningSecretError for a whsk_ private key: a receiver must not hold one', () => {
    const signingKey = whsk(0x11);
    // Act
    let thrown: unknown;
    try {
      verifier.verify(deliveryOf(headers, BODY), [signingKey]);
    } catch (err) {
      thrown = err;
    }
    // Assess: the error names the fix and never the key
    expect(thrown).toBeInstanceOf(InvalidSigningSecretError);
    expect((thrown as Error).message).toContain('whpk_');
    expect((thrown as Error).message).not.toContain(signingKey.slice(5, 20));
  });

  it('gives the same answers when the same verifier sees the same keys again (keys are kept)', () => {
    const secrets = [CURRENT.whpk, PREVIOUS.whpk];
    const first = verifier.verify(deliveryOf(headers, BODY), secrets);
    const again = verifier.verify(deliveryOf(headers, BODY), secrets);
    const retired = verifier.verify(deliveryOf(headersWith(v1a(PREVIOUS.privateKey)), BODY), [CURRENT.whpk]);
    expect([first, again, retired]).toEqual([{ ok: true }, { ok: true }, { ok: false, reason: 'bad-signature' }]);
  });

  it('accepts deliveries across more key rotations than it keeps keys for', () => {
    // Prepare: twenty successive key pairs, each current for one delivery
    const pairs = Array.from({ length: 20 }, keyPair);
    // Act
    const results = pairs.map((pair) => verifier.verify(deliveryOf(headersWith(v1a(pair.privateKey)), BODY), [pair.whpk]));
    // Assess
    expect(results.every((r) => r.ok)).toBe(true);
  });
});

describe('standard-webhooks v1a signing', () => {
  it('signs v1a with a whsk_ key, and node:crypto verifies it with the matching public key', () => {
    // Prepare
    const { signingKey, publicKey } = generateStandardWebhooksKeyPair();
    const rawPublic = Buffer.from(publicKey.slice(5), 'base64');
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: rawPublic.toString('base64url') }, format: 'jwk' });
    // Act
    const entry = signStandardWebhooks(signingKey, 'msg_1', NOW, BODY);
    // Assess
    expect(entry).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const content = Buffer.concat([Buffer.from(`msg_1.${NOW}.`), BODY]);
    expect(verify(null, content, key, Buffer.from(entry.slice(4), 'base64'))).toBe(true);
  });

  it('makes signDelivery headers the verifier accepts with the derived whpk_', () => {
    const signingKey = whsk(0x42);
    const headers = signDelivery({ scheme: 'standard-webhooks' }, signingKey, BODY, { nowSeconds: NOW, id: 'msg_9' });
    expect(headers['webhook-signature']).toMatch(/^v1a,/);
    expect(verifier.verify(deliveryOf(headers, BODY), [standardWebhooksPublicKeyOf(signingKey)])).toEqual({ ok: true });
  });

  it('throws InvalidSigningSecretError when asked to sign with a whpk_ public key', () => {
    expect(() => signStandardWebhooks(CURRENT.whpk, 'msg_1', NOW, BODY)).toThrow(InvalidSigningSecretError);
  });
});

describe('standard-webhooks v1a key pairs', () => {
  it('derives the RFC 8032 TEST 1 public key from its secret key, in the 32- and 64-byte whsk_ forms', () => {
    // RFC 8032, section 7.1, TEST 1
    const seed = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
    const publicKey = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex');
    const expected = `whpk_${publicKey.toString('base64')}`;
    expect(standardWebhooksPublicKeyOf(`whsk_${seed.toString('base64')}`)).toBe(expected);
    expect(standardWebhooksPublicKeyOf(`whsk_${Buffer.concat([seed, publicKey]).toString('base64')}`)).toBe(expected);
  });

  it('generates a 64-byte whsk_ (seed then public key, as Svix writes it) and its raw 32-byte whpk_', () => {
    const pair = generateStandardWebhooksKeyPair();
    const secret = Buffer.from(pair.signingKey.slice(5), 'base64');
    const publicKey = Buffer.from(pair.publicKey.slice(5), 'base64');
    expect(pair.signingKey).toMatch(/^whsk_/);
    expect(pair.publicKey).toMatch(/^whpk_/);
    expect(secret).toHaveLength(64);
    expect(publicKey).toHaveLength(32);
    expect(secret.subarray(32)).toEqual(publicKey);
    expect(standardWebhooksPublicKeyOf(pair.signingKey)).toBe(pair.publicKey);
    expect(generateStandardWebhooksKeyPair().signingKey).not.toBe(pair.signingKey);
  });

  it('throws InvalidSigningSecretError for a whsk_ whose public half does not belong to its seed', () => {
    const a = Buffer.from(generateStandardWebhooksKeyPair().signingKey.slice(5), 'base64');
    const b = Buffer.from(generateStandardWebhooksKeyPair().signingKey.slice(5), 'base64');
    const spliced = `whsk_${Buffer.concat([a.subarray(0, 32), b.subarray(32)]).toString('base64')}`;
    expect(() => standardWebhooksPublicKeyOf(spliced)).toThrow(InvalidSigningSecretError);
    expect(() => signStandardWebhooks(spliced, 'msg_1', NOW, BODY)).toThrow(InvalidSigningSecretError);
  });

  it.each(['whsk_', 'whsk_not base64!', `whsk_${Buffer.alloc(48).toString('base64')}`, whsec(0x11)])(
    'throws InvalidSigningSecretError when deriving a whpk_ from %j',
    (bad) => {
      expect(() => standardWebhooksPublicKeyOf(bad)).toThrow(InvalidSigningSecretError);
    },
  );
});
