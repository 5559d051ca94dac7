/**
 * The generic scheme for senders with no named scheme: HMAC-SHA256 of the raw body, keyed
 * with the secret as UTF-8, in a configurable header after an optional fixed prefix, hex or
 * base64. No timestamp, so replays are left to the idempotency record.
 */
import { anyDigestMatches, hmacSha256 } from './digest.ts';
import { readHeader } from './delivery-headers.ts';
import { decodeBase64Digest, decodeHexDigest } from './encodings.ts';
import { assertUsableSecrets } from './signing-secret-error.ts';
import type { SignatureVerifier, VerifyResult } from './signature-verifier.ts';

/** How a generic route reads its signature; mirrors `HmacSha256Signature` in the route config. */
export interface HmacSha256Options {
  /** Header that carries the signature; matched lowercase. */
  readonly header: string;
  /** Text before the digest, for example `sha256=`. @default '' */
  readonly prefix?: string;
  /** @default 'hex' */
  readonly encoding?: 'hex' | 'base64';
}

/** The header value such a sender would send: prefix, then the encoded digest. */
export function signHmacSha256(secret: string, rawBody: Buffer, options: Omit<HmacSha256Options, 'header'> = {}): string {
  return `${options.prefix ?? ''}${hmacSha256(secret, [rawBody]).toString(options.encoding ?? 'hex')}`;
}

/** A generic HMAC-SHA256 verifier. */
export function createHmacSha256Verifier(options: HmacSha256Options): SignatureVerifier {
  const header = options.header.toLowerCase();
  const prefix = options.prefix ?? '';
  const decode = (options.encoding ?? 'hex') === 'hex' ? decodeHexDigest : decodeBase64Digest;
  return {
    scheme: 'hmac-sha256',
    verify(delivery, secrets): VerifyResult {
      assertUsableSecrets('hmac-sha256', secrets);
      const value = readHeader(delivery, header);
      if (value === undefined) return { ok: false, reason: 'missing-signature' };
      const digest = value.startsWith(prefix) ? decode(value.slice(prefix.length)) : undefined;
      if (digest === undefined) return { ok: false, reason: 'malformed-signature' };
      const authentic = anyDigestMatches(secrets, [digest], (secret) => hmacSha256(secret, [delivery.rawBody]));
      return authentic ? { ok: true } : { ok: false, reason: 'bad-signature' };
    },
  };
}
