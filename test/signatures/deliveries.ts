/**
 * Shared fixtures for the signature specs: one entry per scheme with a current and a
 * previous secret, and a helper that builds what the ingest hands a verifier.
 */
import type { SignatureConfig } from '../../lambdas/config/route-config.ts';
import type { SignedDelivery } from '../../lambdas/domain/signatures/signature-verifier.ts';
import { standardWebhooksPublicKeyOf } from '../../lambdas/domain/signatures/standard-webhooks-keys.ts';

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

/**
 * A `whsk_` ed25519 signing key over a fixed 32-byte seed. The 32-byte seed form is used here
 * on purpose; generateStandardWebhooksKeyPair writes the 64-byte one, tested on its own.
 */
export function whsk(fill: number): string {
  return `whsk_${Buffer.alloc(32, fill).toString('base64')}`;
}

/** What a Standard Webhooks receiver holds for a sender's key: whpk_ for a whsk_, the secret itself for whsec_. */
function heldStandardWebhooksSecret(senderKey: string): string {
  return senderKey.startsWith('whsk_') ? standardWebhooksPublicKeyOf(senderKey) : senderKey;
}

export interface SchemeCase {
  readonly name: string;
  readonly config: SignatureConfig;
  /** Keys the sender signs with; `held` says what the receiver is configured with for each. */
  readonly current: string;
  readonly previous: string;
  /** Headers the scheme needs; each one missing makes the delivery unsigned. */
  readonly requiredHeaders: readonly string[];
  /** Headers whose value must have a shape (a timestamp, a digest); the rest are opaque text. */
  readonly parsedHeaders: readonly string[];
  /** A well-formed secret this verifier does not hold. */
  readonly foreign: string;
  readonly timestamped: boolean;
  /** The secret a receiver holds for a key the sender signs with. @default - the same text (symmetric schemes) */
  readonly held?: (senderKey: string) => string;
}

/** The secret the receiver holds for `senderKey` under scheme case `c`. */
export function heldSecret(c: SchemeCase, senderKey: string): string {
  return c.held === undefined ? senderKey : c.held(senderKey);
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
    name: 'standard-webhooks v1a (ed25519)',
    config: { scheme: 'standard-webhooks' },
    current: whsk(0x11),
    previous: whsk(0x22),
    requiredHeaders: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    parsedHeaders: ['webhook-timestamp', 'webhook-signature'],
    foreign: whsk(0x33),
    timestamped: true,
    held: heldStandardWebhooksSecret,
  },
  {
    // A route moving its sender from HMAC to ed25519 holds the new whpk_ and the old whsec_.
    name: 'standard-webhooks rotating from v1 to v1a',
    config: { scheme: 'standard-webhooks' },
    current: whsk(0x44),
    previous: whsec(0x55),
    requiredHeaders: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    parsedHeaders: ['webhook-timestamp', 'webhook-signature'],
    foreign: whsec(0x66),
    timestamped: true,
    held: heldStandardWebhooksSecret,
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
