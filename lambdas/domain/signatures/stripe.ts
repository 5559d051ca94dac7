/**
 * Stripe (docs.stripe.com/webhooks/signature). `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]`;
 * signed payload `${t}.${body}`; HMAC-SHA256 keyed with the whole `whsec_...` string as UTF-8
 * (Stripe does not decode it, unlike Standard Webhooks). During a secret roll Stripe sends one
 * `v1` per active secret. `v0` (test-mode legacy) and unknown schemes are ignored.
 */
import { anyDigestMatches, hmacSha256 } from './digest.ts';
import { readHeader } from './delivery-headers.ts';
import { decodeHexDigest } from './encodings.ts';
import { assertUsableSecrets } from './signing-secret-error.ts';
import type { SignatureVerifier, VerifyResult } from './signature-verifier.ts';
import { DEFAULT_TOLERANCE_SECONDS, isWithinTolerance, parseUnixSeconds } from './timestamp.ts';
import type { ToleranceOptions } from './timestamp.ts';

/** Header name, lowercase as API Gateway v2 gives it. */
export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';

function signedDigest(secret: string, timestamp: string, rawBody: Buffer): Buffer {
  return hmacSha256(secret, [`${timestamp}.`, rawBody]);
}

/** The `Stripe-Signature` value Stripe would send: `t=<unix>,v1=<hex>`. */
export function signStripe(secret: string, timestampSeconds: number, rawBody: Buffer): string {
  const t = String(timestampSeconds);
  return `t=${t},v1=${signedDigest(secret, t, rawBody).toString('hex')}`;
}

interface StripeHeader {
  readonly timestamp: string;
  readonly digests: readonly Buffer[];
}

/**
 * Splits the header into its one `t` and its readable `v1` digests. An unreadable `v1`
 * is skipped, as Stripe's own libraries do, so one bad entry cannot veto a good one.
 * Two `t` entries are ambiguous (which one was signed?) and make the header malformed.
 */
function parseStripeHeader(header: string): StripeHeader | undefined {
  let timestamp: string | undefined;
  const digests: Buffer[] = [];
  for (const item of header.split(',')) {
    const equals = item.indexOf('=');
    if (equals === -1) continue;
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined) return undefined;
      timestamp = value;
    } else if (key === 'v1') {
      const digest = decodeHexDigest(value);
      if (digest !== undefined) digests.push(digest);
    }
  }
  if (timestamp === undefined || digests.length === 0) return undefined;
  return { timestamp, digests };
}

/**
 * A Stripe verifier. Stripe's libraries only refuse old timestamps; this one also refuses
 * timestamps beyond the tolerance in the future, so a signature minted for a later moment
 * cannot be held back and replayed then. The signature is checked first, so
 * `stale-timestamp` is reported only for deliveries Stripe really signed.
 */
export function createStripeVerifier(options: ToleranceOptions = {}): SignatureVerifier {
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  return {
    scheme: 'stripe',
    verify(delivery, secrets): VerifyResult {
      assertUsableSecrets('stripe', secrets);
      const header = readHeader(delivery, STRIPE_SIGNATURE_HEADER);
      if (header === undefined) return { ok: false, reason: 'missing-signature' };
      const parsed = parseStripeHeader(header);
      const timestamp = parsed === undefined ? undefined : parseUnixSeconds(parsed.timestamp);
      if (parsed === undefined || timestamp === undefined) return { ok: false, reason: 'malformed-signature' };
      const authentic = anyDigestMatches(secrets, parsed.digests, (secret) =>
        signedDigest(secret, parsed.timestamp, delivery.rawBody),
      );
      if (!authentic) return { ok: false, reason: 'bad-signature' };
      if (!isWithinTolerance(timestamp, delivery.nowSeconds, toleranceSeconds)) {
        return { ok: false, reason: 'stale-timestamp' };
      }
      return { ok: true };
    },
  };
}
