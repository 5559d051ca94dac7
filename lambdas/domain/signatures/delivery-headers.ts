import type { SignedDelivery } from './signature-verifier.ts';

/**
 * Reads one header by its lowercase name, as API Gateway v2 delivers names. Surrounding
 * whitespace is not part of an HTTP field value, so it is dropped. An empty value counts
 * as absent: a sender that sends `X-Hub-Signature-256:` has sent no signature.
 */
export function readHeader(delivery: SignedDelivery, lowercaseName: string): string | undefined {
  const value = delivery.headers[lowercaseName]?.trim();
  return value === undefined || value === '' ? undefined : value;
}
