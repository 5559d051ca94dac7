/**
 * GitHub (docs.github.com, "Validating webhook deliveries"). `X-Hub-Signature-256: sha256=<hex>`,
 * HMAC-SHA256 of the raw body keyed with the secret as UTF-8. There is no signed timestamp,
 * so a captured delivery verifies forever; the idempotency record is what makes its replay
 * harmless. The legacy SHA-1 `X-Hub-Signature` is deliberately not accepted.
 */
import { anyDigestMatches, hmacSha256 } from './digest.ts';
import { readHeader } from './delivery-headers.ts';
import { decodeHexDigest } from './encodings.ts';
import { assertUsableSecrets } from './signing-secret-error.ts';
import type { SignatureVerifier, VerifyResult } from './signature-verifier.ts';

/** Header name, lowercase as API Gateway v2 gives it. */
export const GITHUB_SIGNATURE_HEADER = 'x-hub-signature-256';

const PREFIX = 'sha256=';

/** The `X-Hub-Signature-256` value GitHub would send: `sha256=<hex>`. */
export function signGithub(secret: string, rawBody: Buffer): string {
  return `${PREFIX}${hmacSha256(secret, [rawBody]).toString('hex')}`;
}

/** A GitHub verifier. */
export function createGithubVerifier(): SignatureVerifier {
  return {
    scheme: 'github',
    verify(delivery, secrets): VerifyResult {
      assertUsableSecrets('github', secrets);
      const header = readHeader(delivery, GITHUB_SIGNATURE_HEADER);
      if (header === undefined) return { ok: false, reason: 'missing-signature' };
      const digest = header.startsWith(PREFIX) ? decodeHexDigest(header.slice(PREFIX.length)) : undefined;
      if (digest === undefined) return { ok: false, reason: 'malformed-signature' };
      const authentic = anyDigestMatches(secrets, [digest], (secret) => hmacSha256(secret, [delivery.rawBody]));
      return authentic ? { ok: true } : { ok: false, reason: 'bad-signature' };
    },
  };
}
