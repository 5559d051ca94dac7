/**
 * Standard Webhooks (standardwebhooks.com; Svix and others send it).
 * Signed content: `${webhook-id}.${webhook-timestamp}.${body}`, sent in `webhook-signature`
 * as space-separated `<version>,<base64>` entries: a sender rotating its key signs with both.
 * - `v1`: HMAC-SHA256 keyed with the base64-decoded `whsec_` secret (32-byte digest).
 * - `v1a`: ed25519 over the same content, checked with the sender's `whpk_` public key
 *   (64-byte signature). The receiver holds nothing that can sign.
 * The prefix of each secret decides which entries it checks (standard-webhooks-keys.ts), so
 * a route rotating from one to the other simply holds one of each.
 * ed25519 is node:crypto's (OpenSSL), as the spec asks ("use a battle tested cryptographic
 * library"); the `standardwebhooks` 1.1.1 library has no v1a at all: it skips every entry
 * that is not `v1` and base64-decodes any secret as an HMAC key.
 */
import { sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { anyDigestMatches, hmacSha256 } from './digest.ts';
import { readHeader } from './delivery-headers.ts';
import { decodeBase64Digest, decodeBase64Ed25519Signature } from './encodings.ts';
import { assertUsableSecrets } from './signing-secret-error.ts';
import type { SignatureVerifier, VerifyResult } from './signature-verifier.ts';
import { DEFAULT_TOLERANCE_SECONDS, isWithinTolerance, parseUnixSeconds } from './timestamp.ts';
import type { ToleranceOptions } from './timestamp.ts';
import { readStandardWebhooksSigningKey, readStandardWebhooksVerifyKey } from './standard-webhooks-keys.ts';
import type { StandardWebhooksKey } from './standard-webhooks-keys.ts';

/** Header names, lowercase as API Gateway v2 gives them. */
export const STANDARD_WEBHOOKS_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/**
 * Parsed keys are kept per secret text: building an ed25519 key object costs about 20 us,
 * a verify about 60 us (Node 24, measured). A route holds at most a current and a previous
 * secret; the bound only stops a long-lived container that sees many rotations from growing.
 */
const MAX_CACHED_KEYS = 16;

function signedDigest(key: KeyObject, id: string, timestamp: string, rawBody: Buffer): Buffer {
  return hmacSha256(key, [`${id}.${timestamp}.`, rawBody]);
}

/** ed25519 signs one buffer, not a stream of parts. */
function signedContent(id: string, timestamp: string, rawBody: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${id}.${timestamp}.`), rawBody]);
}

/**
 * The `webhook-signature` entry a sender computes: `v1,<base64>` for a `whsec_` secret,
 * `v1a,<base64>` for a `whsk_` signing key.
 * @throws InvalidSigningSecretError when the secret is neither (a `whpk_` public key cannot sign)
 */
export function signStandardWebhooks(secret: string, id: string, timestampSeconds: number, rawBody: Buffer): string {
  const { version, key } = readStandardWebhooksSigningKey(secret);
  const timestamp = String(timestampSeconds);
  const signature =
    version === 'v1' ? signedDigest(key, id, timestamp, rawBody) : sign(null, signedContent(id, timestamp, rawBody), key);
  return `${version},${signature.toString('base64')}`;
}

/** The well-formed entries of a `webhook-signature` header, by version. */
interface SignatureEntries {
  readonly v1: readonly Buffer[];
  readonly v1a: readonly Buffer[];
}

/** Every well-formed `v1` digest and `v1a` signature; unknown versions and unreadable entries are skipped. */
function signatureEntries(header: string): SignatureEntries {
  const v1: Buffer[] = [];
  const v1a: Buffer[] = [];
  for (const entry of header.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma === -1) continue;
    const version = entry.slice(0, comma);
    const value = entry.slice(comma + 1);
    if (version === 'v1') {
      const digest = decodeBase64Digest(value);
      if (digest !== undefined) v1.push(digest);
    } else if (version === 'v1a') {
      const signature = decodeBase64Ed25519Signature(value);
      if (signature !== undefined) v1a.push(signature);
    }
  }
  return { v1, v1a };
}

/**
 * True when any `v1a` signature verifies under any public key. An ed25519 verify uses only
 * public data, so unlike an HMAC comparison it needs no constant-time care.
 */
function anyEd25519Verifies(publicKeys: readonly KeyObject[], signatures: readonly Buffer[], content: () => Buffer): boolean {
  if (publicKeys.length === 0 || signatures.length === 0) return false;
  const message = content();
  return publicKeys.some((key) => signatures.some((signature) => verify(null, message, key, signature)));
}

/**
 * A Standard Webhooks verifier. The signature is checked before the timestamp, so
 * `stale-timestamp` is only ever reported for a delivery the sender really signed: a
 * replay or a skewed clock, not a forgery.
 */
export function createStandardWebhooksVerifier(options: ToleranceOptions = {}): SignatureVerifier {
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const keys = new Map<string, StandardWebhooksKey>();
  const keyOf = (secret: string): StandardWebhooksKey => {
    let key = keys.get(secret);
    if (key === undefined) {
      key = readStandardWebhooksVerifyKey(secret);
      if (keys.size >= MAX_CACHED_KEYS) keys.clear();
      keys.set(secret, key);
    }
    return key;
  };
  return {
    scheme: 'standard-webhooks',
    verify(delivery, secrets): VerifyResult {
      assertUsableSecrets('standard-webhooks', secrets);
      // Every secret is read up front, so a broken previous secret fails loudly even on
      // deliveries the current one would have matched.
      const routeKeys = secrets.map(keyOf);
      const id = readHeader(delivery, STANDARD_WEBHOOKS_HEADERS.id);
      const timestampText = readHeader(delivery, STANDARD_WEBHOOKS_HEADERS.timestamp);
      const header = readHeader(delivery, STANDARD_WEBHOOKS_HEADERS.signature);
      if (id === undefined || timestampText === undefined || header === undefined) {
        return { ok: false, reason: 'missing-signature' };
      }
      const timestamp = parseUnixSeconds(timestampText);
      const entries = signatureEntries(header);
      if (timestamp === undefined || entries.v1.length + entries.v1a.length === 0) {
        return { ok: false, reason: 'malformed-signature' };
      }
      // The signed content uses the timestamp text exactly as sent, not a re-formatted number.
      // Each secret checks only the entries of its own version: an HMAC secret never meets a
      // v1a signature, nor a public key a v1 digest.
      const hmacKeys = routeKeys.filter((k) => k.version === 'v1').map((k) => k.key);
      const publicKeys = routeKeys.filter((k) => k.version === 'v1a').map((k) => k.key);
      const authentic =
        (entries.v1.length > 0 &&
          anyDigestMatches(hmacKeys, entries.v1, (key) => signedDigest(key, id, timestampText, delivery.rawBody))) ||
        anyEd25519Verifies(publicKeys, entries.v1a, () => signedContent(id, timestampText, delivery.rawBody));
      if (!authentic) return { ok: false, reason: 'bad-signature' };
      if (!isWithinTolerance(timestamp, delivery.nowSeconds, toleranceSeconds)) {
        return { ok: false, reason: 'stale-timestamp' };
      }
      return { ok: true };
    },
  };
}
