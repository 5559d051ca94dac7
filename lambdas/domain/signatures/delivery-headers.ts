import type { SignedDelivery } from './signature-verifier.ts';

/**
 * A header's value as every reader of a delivery sees it: the verifiers and the key sources
 * (domain/idempotency-key.ts) both read headers through this one function, so the id a
 * signature covers and the key made from it are the same string. The name is lowercase, as
 * API Gateway v2 delivers names. Surrounding whitespace is not part of an HTTP field value
 * (RFC 9110, section 5.5), so it is dropped: `"msg_1 "` and `" msg_1"` are both `msg_1`. An
 * empty value counts as absent: a sender that sends `X-Hub-Signature-256:` has sent no signature.
 */
export function headerValue(headers: Readonly<Record<string, string | undefined>>, lowercaseName: string): string | undefined {
  const value = headers[lowercaseName]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** Reads one header of a delivery (see headerValue). */
export function readHeader(delivery: SignedDelivery, lowercaseName: string): string | undefined {
  return headerValue(delivery.headers, lowercaseName);
}
