/**
 * Every scheme against signatures its sender would make, made by code that is not ours: the
 * senders' own libraries where they are light enough to be devDependencies, and otherwise the
 * algorithm of the sender's documentation written another way (WebCrypto). Each oracle runs
 * the same specification: the current and the previous secret pass, a retired or foreign one
 * and a changed body do not, a signed timestamp too old or too far ahead is stale, and where
 * the sender puts several signatures in one header, one good one among them is enough.
 *
 * Oracles, and why:
 * - standard-webhooks v1: `standardwebhooks` 1.1.1, the reference library (Webhook.sign).
 * - standard-webhooks v1a: WebCrypto Ed25519. No JavaScript library signs v1a: the reference
 *   one has no asymmetric support (it reads only `v1` entries).
 * - stripe: the `stripe` package itself, Stripe.webhooks.generateTestHeaderString.
 * - github: `@octokit/webhooks-methods` sign, from GitHub's own organisation.
 * - shopify: WebCrypto over the raw body, base64 (shopify.dev, "Deliver webhooks through
 *   HTTPS", verifying a webhook). `@shopify/shopify-api` 15 installs 33 MB in 9 packages
 *   (mostly Admin API clients) and validates only inside a full app config with a runtime adapter.
 * - slack: WebCrypto over `v0:${timestamp}:${body}`, hex (api.slack.com/docs/verifying-requests-from-slack).
 *   `@slack/bolt` 5 pulls 110 packages (express, the Web API client) for a 20-line check, and
 *   `@slack/events-api` 3.0.1 is retired (last release 2021) and drags in @types/node 12.
 * - hmac-sha256: WebCrypto, as the generic scheme has no sender library.
 */
import { webcrypto } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { Stripe } from 'stripe';
import { describe, expect, it } from 'vitest';
import type { SignatureConfig } from '../../lambdas/config/route-config.ts';
import { createVerifier } from '../../lambdas/domain/signatures/create-verifier.ts';
import { BODY, deliveryOf, NOW, whsec } from './deliveries.ts';

const { subtle } = webcrypto;

/** Which of the sender's keys signs. */
type Who = 'current' | 'previous' | 'foreign';
type Headers = Record<string, string>;

interface SenderOracle {
  readonly name: string;
  readonly config: SignatureConfig;
  /** What the route holds for the sender's current and previous keys. */
  readonly held: { readonly current: string; readonly previous: string };
  readonly timestamped: boolean;
  /** The headers the sender sends for `body` signed by `who` at `at` (seconds). */
  readonly sign: (who: Who, body: Buffer, at: number) => Headers | Promise<Headers>;
  /** The same with one signature per key in one header, where the scheme carries several. */
  readonly signEach?: (whos: readonly Who[], body: Buffer, at: number) => Headers | Promise<Headers>;
}

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
};

async function webCryptoHmac(secret: string, ...parts: Uint8Array[]): Promise<Buffer> {
  const key = await subtle.importKey('raw', utf8(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return Buffer.from(await subtle.sign('HMAC', key, concat(...parts)));
}

const symmetric = (prefix: string) => ({ current: `${prefix}-current`, previous: `${prefix}-previous`, foreign: `${prefix}-foreign` });

function standardWebhooksV1(): SenderOracle {
  const secrets = { current: whsec(0x71), previous: whsec(0x72), foreign: whsec(0x73) };
  const entry = (who: Who, body: Buffer, at: number) => new Webhook(secrets[who]).sign('msg_oracle', new Date(at * 1000), body);
  const headers = (signature: string, at: number): Headers => ({
    'webhook-id': 'msg_oracle',
    'webhook-timestamp': String(at),
    'webhook-signature': signature,
  });
  return {
    name: 'standard-webhooks v1 (standardwebhooks library)',
    config: { scheme: 'standard-webhooks' },
    held: secrets,
    timestamped: true,
    sign: (who, body, at) => headers(entry(who, body, at), at),
    signEach: (whos, body, at) => headers(whos.map((who) => entry(who, body, at)).join(' '), at),
  };
}

/** generateKey's typings answer a key or a pair for an algorithm they do not list. */
function isKeyPair(generated: webcrypto.CryptoKey | webcrypto.CryptoKeyPair): generated is webcrypto.CryptoKeyPair {
  return 'privateKey' in generated && 'publicKey' in generated;
}

async function standardWebhooksV1a(): Promise<SenderOracle> {
  const pair = async (): Promise<webcrypto.CryptoKeyPair> => {
    const generated = await subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']);
    if (!isKeyPair(generated)) throw new Error('WebCrypto made one Ed25519 key, not a pair');
    return generated;
  };
  const keys = { current: await pair(), previous: await pair(), foreign: await pair() };
  const whpk = async (who: Who) => `whpk_${Buffer.from(await subtle.exportKey('raw', keys[who].publicKey)).toString('base64')}`;
  const entry = async (who: Who, body: Buffer, at: number) => {
    const signature = await subtle.sign('Ed25519', keys[who].privateKey, concat(utf8(`msg_oracle.${at}.`), body));
    return `v1a,${Buffer.from(signature).toString('base64')}`;
  };
  const headers = (signature: string, at: number): Headers => ({
    'webhook-id': 'msg_oracle',
    'webhook-timestamp': String(at),
    'webhook-signature': signature,
  });
  return {
    name: 'standard-webhooks v1a (WebCrypto Ed25519)',
    config: { scheme: 'standard-webhooks' },
    held: { current: await whpk('current'), previous: await whpk('previous') },
    timestamped: true,
    sign: async (who, body, at) => headers(await entry(who, body, at), at),
    signEach: async (whos, body, at) => headers((await Promise.all(whos.map((who) => entry(who, body, at)))).join(' '), at),
  };
}

function stripe(): SenderOracle {
  const secrets = { current: 'whsec_stripe_current', previous: 'whsec_stripe_previous', foreign: 'whsec_stripe_foreign' };
  const header = (who: Who, body: Buffer, at: number) =>
    Stripe.webhooks.generateTestHeaderString({ payload: body.toString('utf8'), secret: secrets[who], timestamp: at });
  return {
    name: 'stripe (stripe library)',
    config: { scheme: 'stripe' },
    held: secrets,
    timestamped: true,
    sign: (who, body, at) => ({ 'stripe-signature': header(who, body, at) }),
    // While an endpoint secret rolls, Stripe sends one v1 per active secret after the one t.
    signEach: (whos, body, at) => {
      const v1s = whos.map((who) => header(who, body, at).split(',').filter((item) => item.startsWith('v1=')));
      return { 'stripe-signature': [`t=${at}`, ...v1s.flat()].join(',') };
    },
  };
}

function github(): SenderOracle {
  const secrets = symmetric('github');
  return {
    name: 'github (@octokit/webhooks-methods)',
    config: { scheme: 'github' },
    held: secrets,
    timestamped: false,
    sign: async (who, body) => ({ 'x-hub-signature-256': await octokitSign(secrets[who], body.toString('utf8')) }),
  };
}

function shopify(): SenderOracle {
  const secrets = symmetric('shopify');
  return {
    name: 'shopify (WebCrypto, from the docs)',
    config: { scheme: 'shopify' },
    held: secrets,
    timestamped: false,
    sign: async (who, body) => ({ 'x-shopify-hmac-sha256': (await webCryptoHmac(secrets[who], body)).toString('base64') }),
  };
}

function slack(): SenderOracle {
  const secrets = symmetric('slack');
  return {
    name: 'slack (WebCrypto, from the docs)',
    config: { scheme: 'slack' },
    held: secrets,
    timestamped: true,
    sign: async (who, body, at) => ({
      'x-slack-request-timestamp': String(at),
      'x-slack-signature': `v0=${(await webCryptoHmac(secrets[who], utf8(`v0:${at}:`), body)).toString('hex')}`,
    }),
  };
}

function hmacSha256(): SenderOracle {
  const secrets = symmetric('partner');
  return {
    name: 'hmac-sha256 (WebCrypto)',
    config: { scheme: 'hmac-sha256', header: 'X-Partner-Signature', prefix: 'sha256=', encoding: 'hex' },
    held: secrets,
    timestamped: false,
    sign: async (who, body) => ({ 'x-partner-signature': `sha256=${(await webCryptoHmac(secrets[who], body)).toString('hex')}` }),
  };
}

const ORACLES: readonly SenderOracle[] = [
  standardWebhooksV1(),
  await standardWebhooksV1a(),
  stripe(),
  github(),
  shopify(),
  slack(),
  hmacSha256(),
];

describe.each(ORACLES)('$name', (oracle) => {
  const verifier = createVerifier(oracle.config);
  const both = [oracle.held.current, oracle.held.previous];
  const check = (headers: Headers, secrets: readonly string[] = both, body = BODY) => verifier.verify(deliveryOf(headers, body), secrets);

  it('accepts a delivery the sender signed with the current secret', async () => {
    expect(check(await oracle.sign('current', BODY, NOW))).toEqual({ ok: true });
  });

  it('accepts the previous secret while the route holds both, and refuses it once retired', async () => {
    const headers = await oracle.sign('previous', BODY, NOW);
    expect(check(headers)).toEqual({ ok: true });
    expect(check(headers, [oracle.held.current])).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('refuses a delivery signed with a secret the route does not hold', async () => {
    expect(check(await oracle.sign('foreign', BODY, NOW))).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('refuses a body changed after the sender signed it', async () => {
    // Prepare: one digit of the amount changed, same length
    const headers = await oracle.sign('current', BODY, NOW);
    const tampered = Buffer.from(BODY.toString('utf8').replace('1700', '1701'));
    // Act
    const result = check(headers, both, tampered);
    // Assess
    expect(tampered.equals(BODY)).toBe(false);
    expect(result).toEqual({ ok: false, reason: 'bad-signature' });
  });

  if (oracle.timestamped) {
    it('refuses a genuine delivery signed 301 s ago, and one signed 301 s ahead, as stale-timestamp', async () => {
      expect(check(await oracle.sign('current', BODY, NOW - 301))).toEqual({ ok: false, reason: 'stale-timestamp' });
      expect(check(await oracle.sign('current', BODY, NOW + 301))).toEqual({ ok: false, reason: 'stale-timestamp' });
    });

    it('accepts a genuine delivery 300 s off either way', async () => {
      expect(check(await oracle.sign('current', BODY, NOW - 300))).toEqual({ ok: true });
      expect(check(await oracle.sign('current', BODY, NOW + 300))).toEqual({ ok: true });
    });
  }

  const { signEach } = oracle;
  if (signEach !== undefined) {
    it('accepts one header with several signatures when only one of them is made with a held secret', async () => {
      expect(check(await signEach(['foreign', 'current'], BODY, NOW))).toEqual({ ok: true });
      expect(check(await signEach(['previous', 'foreign'], BODY, NOW))).toEqual({ ok: true });
    });

    it('refuses one header with several signatures when none is made with a held secret', async () => {
      const headers = await signEach(['foreign', 'previous'], BODY, NOW);
      expect(check(headers, [oracle.held.current])).toEqual({ ok: false, reason: 'bad-signature' });
    });
  } else {
    it('refuses two signatures in one header, which this sender never sends', async () => {
      // Prepare: the two signature values joined as a multi-signature scheme would join them
      const headers = await oracle.sign('current', BODY, NOW);
      const [name, value] = Object.entries(headers).at(-1)!;
      const [, other] = Object.entries(await oracle.sign('previous', BODY, NOW)).at(-1)!;
      // Act
      const result = check({ ...headers, [name]: `${value},${other}` });
      // Assess
      expect(result).toEqual({ ok: false, reason: 'malformed-signature' });
    });
  }
});
