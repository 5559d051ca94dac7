/**
 * Slack ("Verifying requests from Slack"). Basestring `v0:${X-Slack-Request-Timestamp}:${body}`,
 * HMAC-SHA256 keyed with the signing secret as UTF-8, sent as `X-Slack-Signature: v0=<hex>`.
 * Slack recommends refusing timestamps more than five minutes from the local clock.
 */
import { anyDigestMatches, hmacSha256 } from './digest.ts';
import { readHeader } from './delivery-headers.ts';
import { decodeHexDigest } from './encodings.ts';
import { assertUsableSecrets } from './signing-secret-error.ts';
import type { SignatureVerifier, VerifyResult } from './signature-verifier.ts';
import { DEFAULT_TOLERANCE_SECONDS, isWithinTolerance, parseUnixSeconds } from './timestamp.ts';
import type { ToleranceOptions } from './timestamp.ts';

/** Header names, lowercase as API Gateway v2 gives them. */
export const SLACK_HEADERS = {
  timestamp: 'x-slack-request-timestamp',
  signature: 'x-slack-signature',
} as const;

const VERSION_PREFIX = 'v0=';

function signedDigest(secret: string, timestamp: string, rawBody: Buffer): Buffer {
  return hmacSha256(secret, [`v0:${timestamp}:`, rawBody]);
}

/** The `X-Slack-Signature` value Slack would send for this timestamp: `v0=<hex>`. */
export function signSlack(secret: string, timestampSeconds: number, rawBody: Buffer): string {
  return `${VERSION_PREFIX}${signedDigest(secret, String(timestampSeconds), rawBody).toString('hex')}`;
}

/**
 * A Slack verifier. The signature is checked before the timestamp, so `stale-timestamp`
 * is only reported for requests Slack really signed.
 */
export function createSlackVerifier(options: ToleranceOptions = {}): SignatureVerifier {
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  return {
    scheme: 'slack',
    verify(delivery, secrets): VerifyResult {
      assertUsableSecrets('slack', secrets);
      const timestampText = readHeader(delivery, SLACK_HEADERS.timestamp);
      const header = readHeader(delivery, SLACK_HEADERS.signature);
      if (timestampText === undefined || header === undefined) return { ok: false, reason: 'missing-signature' };
      const timestamp = parseUnixSeconds(timestampText);
      const digest = header.startsWith(VERSION_PREFIX) ? decodeHexDigest(header.slice(VERSION_PREFIX.length)) : undefined;
      if (timestamp === undefined || digest === undefined) return { ok: false, reason: 'malformed-signature' };
      const authentic = anyDigestMatches(secrets, [digest], (secret) =>
        signedDigest(secret, timestampText, delivery.rawBody),
      );
      if (!authentic) return { ok: false, reason: 'bad-signature' };
      if (!isWithinTolerance(timestamp, delivery.nowSeconds, toleranceSeconds)) {
        return { ok: false, reason: 'stale-timestamp' };
      }
      return { ok: true };
    },
  };
}
