/**
 * Standard Webhooks (standardwebhooks.com; Svix and others send it).
 * Signed content: `${webhook-id}.${webhook-timestamp}.${body}`, HMAC-SHA256 keyed with the
 * base64-decoded secret (after its `whsec_` prefix), base64 in `webhook-signature` as
 * space-separated `v1,<base64>` entries: a sender rotating its secret signs with both.
 */
import { createSecretKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { anyDigestMatches, hmacSha256 } from './digest.ts';
import { readHeader } from './delivery-headers.ts';
import { decodeBase64, decodeBase64Digest } from './encodings.ts';
import { assertUsableSecrets, InvalidSigningSecretError } from './signing-secret-error.ts';
import type { SignatureVerifier, VerifyResult } from './signature-verifier.ts';
import { DEFAULT_TOLERANCE_SECONDS, isWithinTolerance, parseUnixSeconds } from './timestamp.ts';
import type { ToleranceOptions } from './timestamp.ts';

/** Header names, lowercase as API Gateway v2 gives them. */
export const STANDARD_WEBHOOKS_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

const SECRET_PREFIX = 'whsec_';

/**
 * Turns a `whsec_<base64>` (or bare base64) secret into the HMAC key: the decoded bytes,
 * not the text. That difference is the usual reason a hand-written verifier never matches.
 * @throws InvalidSigningSecretError when the text is not base64
 */
export function standardWebhooksKey(secret: string): KeyObject {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const bytes = decodeBase64(encoded);
  if (bytes === undefined) {
    throw new InvalidSigningSecretError('standard-webhooks: a signing secret is not whsec_ followed by base64');
  }
  return createSecretKey(bytes);
}

function signedDigest(key: KeyObject, id: string, timestamp: string, rawBody: Buffer): Buffer {
  return hmacSha256(key, [`${id}.${timestamp}.`, rawBody]);
}

/**
 * The `webhook-signature` value a sender computes: `v1,<base64>`.
 * @throws InvalidSigningSecretError when the secret is not base64
 */
export function signStandardWebhooks(secret: string, id: string, timestampSeconds: number, rawBody: Buffer): string {
  return `v1,${signedDigest(standardWebhooksKey(secret), id, String(timestampSeconds), rawBody).toString('base64')}`;
}

/** Every well-formed `v1` digest in the header; other versions (`v1a` is asymmetric) are skipped. */
function v1Digests(header: string): Buffer[] {
  const digests: Buffer[] = [];
  for (const entry of header.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma === -1 || entry.slice(0, comma) !== 'v1') continue;
    const digest = decodeBase64Digest(entry.slice(comma + 1));
    if (digest !== undefined) digests.push(digest);
  }
  return digests;
}

/**
 * A Standard Webhooks verifier. The signature is checked before the timestamp, so
 * `stale-timestamp` is only ever reported for a delivery the sender really signed: a
 * replay or a skewed clock, not a forgery.
 */
export function createStandardWebhooksVerifier(options: ToleranceOptions = {}): SignatureVerifier {
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  return {
    scheme: 'standard-webhooks',
    verify(delivery, secrets): VerifyResult {
      assertUsableSecrets('standard-webhooks', secrets);
      // Every secret is decoded up front, so a broken previous secret fails loudly even on
      // deliveries the current one would have matched.
      const keys = secrets.map(standardWebhooksKey);
      const id = readHeader(delivery, STANDARD_WEBHOOKS_HEADERS.id);
      const timestampText = readHeader(delivery, STANDARD_WEBHOOKS_HEADERS.timestamp);
      const header = readHeader(delivery, STANDARD_WEBHOOKS_HEADERS.signature);
      if (id === undefined || timestampText === undefined || header === undefined) {
        return { ok: false, reason: 'missing-signature' };
      }
      const timestamp = parseUnixSeconds(timestampText);
      const candidates = v1Digests(header);
      if (timestamp === undefined || candidates.length === 0) return { ok: false, reason: 'malformed-signature' };
      // The signed content uses the timestamp text exactly as sent, not a re-formatted number.
      const authentic = anyDigestMatches(keys, candidates, (key) =>
        signedDigest(key, id, timestampText, delivery.rawBody),
      );
      if (!authentic) return { ok: false, reason: 'bad-signature' };
      if (!isWithinTolerance(timestamp, delivery.nowSeconds, toleranceSeconds)) {
        return { ok: false, reason: 'stale-timestamp' };
      }
      return { ok: true };
    },
  };
}
