/**
 * The signature schemes the ingest understands, and how a route configures one: the
 * domain's types, which the configuration (config/route-config.ts) names.
 */

/** Signature schemes the ingest understands. */
export const SIGNATURE_SCHEMES = ['standard-webhooks', 'stripe', 'github', 'shopify', 'slack', 'hmac-sha256'] as const;
export type SignatureSchemeName = (typeof SIGNATURE_SCHEMES)[number];

/** How a generic HMAC-SHA256 route reads its signature. */
export interface HmacSha256Signature {
  readonly scheme: 'hmac-sha256';
  /** Header that carries the signature, for example `x-signature`. */
  readonly header: string;
  /** Text before the digest in the header, for example `sha256=`. @default '' */
  readonly prefix?: string;
  /** @default 'hex' */
  readonly encoding?: 'hex' | 'base64';
}

/** Schemes with a signed timestamp take a tolerance. */
export interface TimestampedSignature {
  readonly scheme: 'standard-webhooks' | 'stripe' | 'slack';
  /** Largest accepted clock difference, in seconds. @default 300 */
  readonly toleranceSeconds?: number;
}

export interface PlainSignature {
  readonly scheme: 'github' | 'shopify';
}

export type SignatureConfig = HmacSha256Signature | TimestampedSignature | PlainSignature;
