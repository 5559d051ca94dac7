/**
 * Interop with the outside world. Signatures this project makes and checks itself only
 * prove it agrees with itself; these specs hold it to the reference libraries and to
 * the vendors' published examples, and to independent computations written another way
 * (WebCrypto) where a vendor publishes no full example.
 *
 * Sources:
 * - Standard Webhooks: `standardwebhooks` 1.1.1 (sign and verify), and the vector of its
 *   test "sign function works" (standard-webhooks/standard-webhooks,
 *   libraries/javascript/src/webhook.test.ts).
 * - GitHub: `@octokit/webhooks-methods` 6.0.0 (sign and verify), and the example in GitHub's
 *   "Validating webhook deliveries" (secret "It's a Secret to Everybody", body "Hello, World!").
 * - Slack: the worked example in "Verifying requests from Slack" (api.slack.com).
 * - Stripe: the `stripe` package 23.1.0 itself (generateTestHeaderString, constructEvent).
 *   Stripe publishes no full Stripe-Signature vector; stripe-node's crypto provider suite
 *   (stripe/stripe-node, test/crypto/helpers.ts) pins the HMAC with a UTF-8 string key, and
 *   the header is also checked against a WebCrypto computation written from Stripe's docs.
 * - Shopify: publishes no vector (its own library tests compute theirs); WebCrypto again.
 * - RFC 4231 test case 2 pins the HMAC-SHA256 primitive itself.
 */
import { webcrypto } from 'node:crypto';
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { Stripe } from 'stripe';
import { describe, expect, it } from 'vitest';
import { createVerifier } from '../../lambdas/domain/signatures/create-verifier.ts';
import { hmacSha256 } from '../../lambdas/domain/signatures/digest.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { signSlack } from '../../lambdas/domain/signatures/slack.ts';
import { generateStandardWebhooksKeyPair } from '../../lambdas/domain/signatures/standard-webhooks-keys.ts';
import { signStandardWebhooks } from '../../lambdas/domain/signatures/standard-webhooks.ts';
import { signStripe } from '../../lambdas/domain/signatures/stripe.ts';
import { BODY, deliveryOf, NOW, whsec } from './deliveries.ts';

/** HMAC-SHA256 through WebCrypto: a second, separately written implementation. */
async function webCryptoHmac(key: Uint8Array, ...parts: Uint8Array[]): Promise<Uint8Array> {
  const message = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    message.set(part, offset);
    offset += part.length;
  }
  const cryptoKey = await webcrypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await webcrypto.subtle.sign('HMAC', cryptoKey, message));
}
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const hexOf = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

describe('HMAC-SHA256 primitive', () => {
  it('matches RFC 4231 test case 2', () => {
    const digest = hmacSha256('Jefe', [Buffer.from('what do ya want for nothing?')]);
    expect(digest.toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });

  it.each([
    ['an empty payload', '', 'f7f9bd47fb987337b5796fdc1fdb9ba221d0d5396814bfcaf9521f43fd8927fd'],
    ['a JSON payload', '{"obj1":"hello","obj2":"world"}', 'bebb1a643997f419b315ddba19e6f5411e1ce7f810ba6d3617ce72823092f363'],
    ['a payload outside the BMP', '\u{1F600}', '837da296d05c4fe31f61d5d7ead035099d9585a5bcde87de952012a78f0b0c43'],
  ])("matches stripe-node's crypto provider vector for %s (key 'test_secret' as UTF-8)", (_, payload, expected) => {
    expect(hmacSha256('test_secret', [Buffer.from(payload, 'utf8')]).toString('hex')).toBe(expected);
  });
});

describe('standard-webhooks interop with the standardwebhooks library', () => {
  const secret = whsec(0x5a);
  const verifier = createVerifier({ scheme: 'standard-webhooks' });

  it('produces the published vector of the reference test suite', () => {
    const signature = signStandardWebhooks(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      Buffer.from('{"test": 2432232314}'),
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('accepts the published vector of the reference test suite', () => {
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    const result = verifier.verify(
      deliveryOf(headers, Buffer.from('{"test": 2432232314}'), 1614265330 + 60),
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    );
    expect(result).toEqual({ ok: true });
  });

  it('accepts a signature made by Webhook.sign', () => {
    // Prepare
    const now = 1_800_000_000;
    const signature = new Webhook(secret).sign('msg_ref', new Date(now * 1000), BODY);
    const headers = { 'webhook-id': 'msg_ref', 'webhook-timestamp': String(now), 'webhook-signature': signature };
    // Act
    const result = verifier.verify(deliveryOf(headers, BODY, now), [secret]);
    // Assess
    expect(result).toEqual({ ok: true });
  });

  it('makes signatures that Webhook.verify accepts', () => {
    // Prepare: the library reads its own clock, so sign at the real now
    const headers = signDelivery({ scheme: 'standard-webhooks' }, secret, BODY, { nowSeconds: nowSeconds(), id: 'msg_ours' });
    // Act
    const act = () => new Webhook(secret).verify(BODY, headers);
    // Assess: verify returns the parsed JSON when the signature holds, and throws otherwise
    expect(act()).toEqual(JSON.parse(BODY.toString('utf8')));
  });

  it('agrees with Webhook.verify that a tampered body is refused', () => {
    const headers = signDelivery({ scheme: 'standard-webhooks' }, secret, BODY, { nowSeconds: nowSeconds(), id: 'msg_ours' });
    const tampered = Buffer.from(BODY.toString('utf8').replace('1700', '1701'));
    expect(() => new Webhook(secret).verify(tampered, headers)).toThrow();
    expect(verifier.verify(deliveryOf(headers, tampered, nowSeconds()), [secret])).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('has no v1a in the library: Webhook.verify skips a v1a entry that ours checks with the whpk_', () => {
    // Prepare: one header with a v1a entry only, signed with a fresh key pair
    const pair = generateStandardWebhooksKeyPair();
    const headers = signDelivery({ scheme: 'standard-webhooks' }, pair.signingKey, BODY, { nowSeconds: nowSeconds(), id: 'msg_v1a' });
    // Act
    const ours = verifier.verify(deliveryOf(headers, BODY, nowSeconds()), [pair.publicKey]);
    const reference = () => new Webhook(secret).verify(BODY, headers);
    // Assess
    expect(headers['webhook-signature']).toMatch(/^v1a,/);
    expect(ours).toEqual({ ok: true });
    expect(reference).toThrow('No matching signature found');
  });

  it('signs the body bytes, where Webhook.verify decodes them as UTF-8 first', () => {
    // Prepare: two bodies that differ only in invalid UTF-8 bytes; both decode to the text "{\uFFFD}"
    const signedBody = Buffer.from([0x7b, 0xff, 0x7d]);
    const otherBody = Buffer.from([0x7b, 0xfe, 0x7d]);
    const headers = signDelivery({ scheme: 'standard-webhooks' }, secret, signedBody, { nowSeconds: nowSeconds(), id: 'msg_bytes' });
    // Act
    const genuine = verifier.verify(deliveryOf(headers, signedBody, nowSeconds()), [secret]);
    const altered = verifier.verify(deliveryOf(headers, otherBody, nowSeconds()), [secret]);
    const reference = () => new Webhook(secret).verify(signedBody, headers, { jsonParse: false });
    // Assess: bytes decide here; the library re-encodes the text and so refuses the genuine bytes
    expect(signedBody.toString('utf8')).toBe(otherBody.toString('utf8'));
    expect(genuine).toEqual({ ok: true });
    expect(altered).toEqual({ ok: false, reason: 'bad-signature' });
    expect(reference).toThrow('No matching signature found');
  });
});

describe('github interop with @octokit/webhooks-methods', () => {
  const secret = 'octokit-shared-secret';
  const verifier = createVerifier({ scheme: 'github' });

  it("accepts GitHub's documented example", () => {
    const headers = { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' };
    const result = verifier.verify(deliveryOf(headers, Buffer.from('Hello, World!')), ["It's a Secret to Everybody"]);
    expect(result).toEqual({ ok: true });
  });

  it("accepts GitHub's documented example through the generic hmac-sha256 scheme configured like GitHub", () => {
    const generic = createVerifier({ scheme: 'hmac-sha256', header: 'x-hub-signature-256', prefix: 'sha256=', encoding: 'hex' });
    const headers = { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' };
    expect(generic.verify(deliveryOf(headers, Buffer.from('Hello, World!')), ["It's a Secret to Everybody"])).toEqual({ ok: true });
  });

  it('accepts a signature made by octokit sign', async () => {
    // Prepare
    const payload = BODY.toString('utf8');
    const header = await octokitSign(secret, payload);
    // Act
    const result = verifier.verify(deliveryOf({ 'x-hub-signature-256': header }, Buffer.from(payload)), [secret]);
    // Assess
    expect(result).toEqual({ ok: true });
  });

  it('makes signatures that octokit verify accepts, and octokit refuses them for another body', async () => {
    const headers = signDelivery({ scheme: 'github' }, secret, BODY, { nowSeconds: 0 });
    const header = headers['x-hub-signature-256']!;
    expect(await octokitVerify(secret, BODY.toString('utf8'), header)).toBe(true);
    expect(await octokitVerify(secret, `${BODY.toString('utf8')} `, header)).toBe(false);
  });
});

describe('stripe against an independent computation of its documented scheme', () => {
  const secret = 'whsec_test_secret';
  const verifier = createVerifier({ scheme: 'stripe' });

  it('accepts a Stripe-Signature computed with WebCrypto over `${t}.${body}`, keyed with the secret text', async () => {
    // Prepare
    const t = 1_800_000_000;
    const v1 = hexOf(await webCryptoHmac(utf8(secret), utf8(`${t}.`), BODY));
    // Act
    const result = verifier.verify(deliveryOf({ 'stripe-signature': `t=${t},v1=${v1}` }, BODY, t), [secret]);
    // Assess
    expect(result).toEqual({ ok: true });
  });

  it('makes exactly the header the independent computation makes', async () => {
    const t = 1_800_000_000;
    const v1 = hexOf(await webCryptoHmac(utf8(secret), utf8(`${t}.`), BODY));
    expect(signDelivery({ scheme: 'stripe' }, secret, BODY, { nowSeconds: t })).toEqual({ 'stripe-signature': `t=${t},v1=${v1}` });
  });
});

describe('stripe interop with the stripe library', () => {
  const secret = 'whsec_stripe_library_secret';
  const previous = 'whsec_stripe_library_previous';
  /** constructEvent at a fixed clock: receivedAt is in milliseconds; 300 s is Stripe's default tolerance. */
  const construct = (header: string, body = BODY) => Stripe.webhooks.constructEvent(body, header, secret, 300, undefined, NOW * 1000);

  it('makes exactly the header generateTestHeaderString makes', () => {
    const theirs = Stripe.webhooks.generateTestHeaderString({ payload: BODY.toString('utf8'), secret, timestamp: NOW });
    expect(signStripe(secret, NOW, BODY)).toBe(theirs);
  });

  it('makes headers constructEvent accepts, and returns the event they sign', () => {
    expect(construct(signStripe(secret, NOW, BODY))).toEqual(JSON.parse(BODY.toString('utf8')));
  });

  it('agrees with constructEvent on a header with two v1 entries, as Stripe sends while a secret rolls', () => {
    // Prepare: the entry of the secret being rolled away, then ours
    const rolled = signStripe(previous, NOW, BODY).split(',')[1];
    const header = `t=${NOW},${rolled},${signStripe(secret, NOW, BODY).split(',')[1]}`;
    // Act
    const ours = createVerifier({ scheme: 'stripe' }).verify(deliveryOf({ 'stripe-signature': header }, BODY), [secret]);
    // Assess
    expect(construct(header)).toEqual(JSON.parse(BODY.toString('utf8')));
    expect(ours).toEqual({ ok: true });
  });

  it('agrees with constructEvent that a changed body or another secret is refused', () => {
    const tampered = Buffer.from(BODY.toString('utf8').replace('1700', '1701'));
    expect(() => construct(signStripe(secret, NOW, BODY), tampered)).toThrow(/No signatures found matching/);
    expect(() => construct(signStripe('whsec_someone_else', NOW, BODY))).toThrow(/No signatures found matching/);
  });

  it('agrees with constructEvent on a stale timestamp, and is stricter on one 301 s ahead', () => {
    // Prepare
    const verifier = createVerifier({ scheme: 'stripe' });
    const stale = signStripe(secret, NOW - 301, BODY);
    const ahead = signStripe(secret, NOW + 301, BODY);
    // Act, Assess: Stripe checks only the age; a signature minted for later is refused here
    expect(() => construct(stale)).toThrow(/Timestamp outside the tolerance zone/);
    expect(verifier.verify(deliveryOf({ 'stripe-signature': stale }, BODY), [secret])).toEqual({ ok: false, reason: 'stale-timestamp' });
    expect(construct(ahead)).toEqual(JSON.parse(BODY.toString('utf8')));
    expect(verifier.verify(deliveryOf({ 'stripe-signature': ahead }, BODY), [secret])).toEqual({ ok: false, reason: 'stale-timestamp' });
  });
});

describe("slack against Slack's documented example", () => {
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const timestamp = 1531420618;
  const body = Buffer.from(
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  );
  const expected = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
  const headers = { 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': expected };
  const verifier = createVerifier({ scheme: 'slack' });

  it('computes the documented signature', () => {
    expect(signSlack(secret, timestamp, body)).toBe(expected);
  });

  it('accepts the documented request a minute after it was sent', () => {
    expect(verifier.verify(deliveryOf(headers, body, timestamp + 60), [secret])).toEqual({ ok: true });
  });

  it('refuses the documented request today as stale-timestamp', () => {
    expect(verifier.verify(deliveryOf(headers, body, nowSeconds()), [secret])).toEqual({ ok: false, reason: 'stale-timestamp' });
  });
});

describe('shopify against an independent computation', () => {
  it('accepts the base64 HMAC of the raw body computed with WebCrypto, keyed with the secret text', async () => {
    // Prepare
    const secret = 'shopify-app-client-secret';
    const value = Buffer.from(await webCryptoHmac(utf8(secret), BODY)).toString('base64');
    // Act
    const result = createVerifier({ scheme: 'shopify' }).verify(deliveryOf({ 'x-shopify-hmac-sha256': value }, BODY), [secret]);
    // Assess
    expect(result).toEqual({ ok: true });
  });
});

describe('hmac-sha256 against an independent computation', () => {
  it('accepts a base64 digest computed with WebCrypto', async () => {
    const secret = 'partner-secret';
    const value = `hmac ${Buffer.from(await webCryptoHmac(utf8(secret), BODY)).toString('base64')}`;
    const verifier = createVerifier({ scheme: 'hmac-sha256', header: 'x-partner-signature', prefix: 'hmac ', encoding: 'base64' });
    expect(verifier.verify(deliveryOf({ 'x-partner-signature': value }, BODY), [secret])).toEqual({ ok: true });
  });
});
