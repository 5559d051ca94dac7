import type { SignatureSchemeName } from './signature-config.ts';

/** What a verifier sees of a delivery. Header names are lowercase, as API Gateway v2 gives them. */
export interface SignedDelivery {
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The exact bytes the sender signed: never a re-serialised JSON body. */
  readonly rawBody: Buffer;
  /** The receiver's clock, in whole seconds since the epoch. */
  readonly nowSeconds: number;
}

/**
 * Why a delivery was refused. It is logged and counted, never told to the sender:
 * every refusal answers the same bare 401.
 */
export type VerifyFailure = 'missing-signature' | 'malformed-signature' | 'bad-signature' | 'stale-timestamp';

export type VerifyResult = { readonly ok: true } | { readonly ok: false; readonly reason: VerifyFailure };

/** One module per scheme implements this. */
export interface SignatureVerifier {
  readonly scheme: SignatureSchemeName;
  /**
   * Accepts the delivery when any one of `secrets` (current first, then previous during a
   * rotation) produced one of its signatures. Digest comparison is constant-time.
   * Never throws for anything the sender controls (headers, body): a delivery is refused
   * with a reason instead.
   * @throws InvalidSigningSecretError when `secrets` is empty or holds an unusable secret
   *   (our configuration, not the sender's fault)
   */
  verify(delivery: SignedDelivery, secrets: readonly string[]): VerifyResult;
}
