/**
 * Shared fixtures for the signature specs: one entry per scheme with a current and a
 * previous secret, and a helper that builds what the ingest hands a verifier.
 */
import type { SignatureConfig } from '../../lambdas/config/route-config.ts';
import type { SignedDelivery } from '../../lambdas/domain/signatures/signature-verifier.ts';

/** A fixed receiver clock: 2027-01-15T08:00:00Z. */
export const NOW = 1_800_000_000;

/** A JSON body with a non-ASCII character, so UTF-8 handling is always exercised. */
export const BODY = Buffer.from('{"id":"evt_1","amount":1700,"currency":"EUR","note":"café"}');

/** What the ingest hands a verifier. */
export function deliveryOf(headers: Record<string, string | undefined>, rawBody: Buffer, nowSeconds = NOW): SignedDelivery {
  return { headers, rawBody, nowSeconds };
}

/** A `whsec_` secret over fixed bytes, so failures are reproducible. */
export function whsec(fill: number, bytes = 32): string {
  return `whsec_${Buffer.alloc(bytes, fill).toString('base64')}`;
}

export interface SchemeCase {
  readonly name: string;
  readonly config: SignatureConfig;
  readonly current: string;
  readonly previous: string;
  /** Headers the scheme needs; each one missing makes the delivery unsigned. */
  readonly requiredHeaders: readonly string[];
  /** Headers whose value must have a shape (a timestamp, a digest); the rest are opaque text. */
  readonly parsedHeaders: readonly string[];
  /** A well-formed secret this verifier does not hold. */
  readonly foreign: string;
  readonly timestamped: boolean;
}

export const SCHEME_CASES: readonly SchemeCase[] = [
  {
    name: 'standard-webhooks',
    config: { scheme: 'standard-webhooks' },
    current: whsec(0x11),
    previous: whsec(0x22),
    requiredHeaders: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    parsedHeaders: ['webhook-timestamp', 'webhook-signature'],
    foreign: whsec(0x33),
    timestamped: true,
  },
  {
    name: 'stripe',
    config: { scheme: 'stripe' },
    current: 'whsec_current0123456789abcdefghij',
    previous: 'whsec_previous0123456789abcdefghi',
    requiredHeaders: ['stripe-signature'],
    parsedHeaders: ['stripe-signature'],
    foreign: 'whsec_someone_else',
    timestamped: true,
  },
  {
    name: 'github',
    config: { scheme: 'github' },
    current: 'github-current-secret',
    previous: 'github-previous-secret',
    requiredHeaders: ['x-hub-signature-256'],
    parsedHeaders: ['x-hub-signature-256'],
    foreign: 'someone-else',
    timestamped: false,
  },
  {
    name: 'shopify',
    config: { scheme: 'shopify' },
    current: 'shpss_current',
    previous: 'shpss_previous',
    requiredHeaders: ['x-shopify-hmac-sha256'],
    parsedHeaders: ['x-shopify-hmac-sha256'],
    foreign: 'someone-else',
    timestamped: false,
  },
  {
    name: 'slack',
    config: { scheme: 'slack' },
    current: 'slack-current-signing-secret',
    previous: 'slack-previous-signing-secret',
    requiredHeaders: ['x-slack-request-timestamp', 'x-slack-signature'],
    parsedHeaders: ['x-slack-request-timestamp', 'x-slack-signature'],
    foreign: 'someone-else',
    timestamped: true,
  },
  {
    name: 'hmac-sha256 (hex, prefix)',
    config: { scheme: 'hmac-sha256', header: 'x-signature', prefix: 'sha256=', encoding: 'hex' },
    current: 'generic-current',
    previous: 'generic-previous',
    requiredHeaders: ['x-signature'],
    parsedHeaders: ['x-signature'],
    foreign: 'someone-else',
    timestamped: false,
  },
  {
    name: 'hmac-sha256 (base64, no prefix)',
    config: { scheme: 'hmac-sha256', header: 'x-signature', encoding: 'base64' },
    current: 'generic-current',
    previous: 'generic-previous',
    requiredHeaders: ['x-signature'],
    parsedHeaders: ['x-signature'],
    foreign: 'someone-else',
    timestamped: false,
  },
];
