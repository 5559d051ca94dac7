/**
 * Shopify (shopify.dev, "Deliver webhooks through HTTPS", verification). `X-Shopify-Hmac-Sha256`
 * holds the base64 HMAC-SHA256 of the raw body, keyed with the app's client secret as UTF-8.
 * No signed timestamp: replays are the idempotency record's job.
 */
import { anyDigestMatches, hmacSha256 } from './digest.ts';
import { readHeader } from './delivery-headers.ts';
import { decodeBase64Digest } from './encodings.ts';
import { assertUsableSecrets } from './signing-secret-error.ts';
import type { SignatureVerifier, VerifyResult } from './signature-verifier.ts';

/** Header name, lowercase as API Gateway v2 gives it. */
export const SHOPIFY_SIGNATURE_HEADER = 'x-shopify-hmac-sha256';

/** The `X-Shopify-Hmac-Sha256` value Shopify would send: base64, no prefix. */
export function signShopify(secret: string, rawBody: Buffer): string {
  return hmacSha256(secret, [rawBody]).toString('base64');
}

/** A Shopify verifier. */
export function createShopifyVerifier(): SignatureVerifier {
  return {
    scheme: 'shopify',
    verify(delivery, secrets): VerifyResult {
      assertUsableSecrets('shopify', secrets);
      const header = readHeader(delivery, SHOPIFY_SIGNATURE_HEADER);
      if (header === undefined) return { ok: false, reason: 'missing-signature' };
      const digest = decodeBase64Digest(header);
      if (digest === undefined) return { ok: false, reason: 'malformed-signature' };
      const authentic = anyDigestMatches(secrets, [digest], (secret) => hmacSha256(secret, [delivery.rawBody]));
      return authentic ? { ok: true } : { ok: false, reason: 'bad-signature' };
    },
  };
}
