/**
 * Signs a delivery the way its sender would, for the local tools (`npm run send`, the storm
 * simulator) and integration tests. It adds only what the scheme signs with; headers that
 * carry keys or event types (X-GitHub-Delivery, X-Shopify-Webhook-Id, Idempotency-Key...)
 * are the caller's.
 */
import { randomUUID } from 'node:crypto';
import type { SignatureConfig } from './signature-config.ts';
import { GITHUB_SIGNATURE_HEADER, signGithub } from './github.ts';
import { signHmacSha256 } from './hmac-sha256.ts';
import { SHOPIFY_SIGNATURE_HEADER, signShopify } from './shopify.ts';
import { SLACK_HEADERS, signSlack } from './slack.ts';
import { signStandardWebhooks, STANDARD_WEBHOOKS_HEADERS } from './standard-webhooks.ts';
import { signStripe, STRIPE_SIGNATURE_HEADER } from './stripe.ts';

/** When and as what the delivery is signed. */
export interface SignDeliveryOptions {
  /** The sender's clock, in whole seconds since the epoch. */
  readonly nowSeconds: number;
  /** Standard Webhooks only: the `webhook-id`, which is also the default idempotency key. @default - a new `msg_<uuid>` */
  readonly id?: string;
}

/**
 * Returns the signature headers a real sender adds for `rawBody`. Names are lowercase, as
 * API Gateway v2 hands them to the ingest (HTTP itself ignores the case).
 * A Standard Webhooks `whsk_` signing key signs a `v1a` (ed25519) entry, a `whsec_` secret a `v1` one.
 * @throws InvalidSigningSecretError for a Standard Webhooks secret that is neither (a `whpk_`
 *   public key cannot sign)
 */
export function signDelivery(
  signature: SignatureConfig,
  secret: string,
  rawBody: Buffer,
  options: SignDeliveryOptions,
): Record<string, string> {
  const { nowSeconds } = options;
  switch (signature.scheme) {
    case 'standard-webhooks': {
      const id = options.id ?? `msg_${randomUUID()}`;
      return {
        [STANDARD_WEBHOOKS_HEADERS.id]: id,
        [STANDARD_WEBHOOKS_HEADERS.timestamp]: String(nowSeconds),
        [STANDARD_WEBHOOKS_HEADERS.signature]: signStandardWebhooks(secret, id, nowSeconds, rawBody),
      };
    }
    case 'stripe':
      return { [STRIPE_SIGNATURE_HEADER]: signStripe(secret, nowSeconds, rawBody) };
    case 'slack':
      return {
        [SLACK_HEADERS.timestamp]: String(nowSeconds),
        [SLACK_HEADERS.signature]: signSlack(secret, nowSeconds, rawBody),
      };
    case 'github':
      return { [GITHUB_SIGNATURE_HEADER]: signGithub(secret, rawBody) };
    case 'shopify':
      return { [SHOPIFY_SIGNATURE_HEADER]: signShopify(secret, rawBody) };
    case 'hmac-sha256':
      return { [signature.header.toLowerCase()]: signHmacSha256(secret, rawBody, signature) };
  }
}
