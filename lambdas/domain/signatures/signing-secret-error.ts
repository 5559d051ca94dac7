/**
 * A signing secret the verifier cannot use: none given, an empty one, or a Standard Webhooks
 * key of the wrong shape (not base64, an ed25519 key of the wrong length, a private key
 * where a public one belongs). This is our configuration failing, not the sender's delivery,
 * so it is thrown (and answered 5xx, which the sender retries once the secret is fixed)
 * rather than returned as a refusal that would 401 every genuine delivery. The message
 * never contains the secret.
 */
export class InvalidSigningSecretError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidSigningSecretError';
  }
}

/**
 * Checks that there is at least one secret and none is empty.
 * @throws InvalidSigningSecretError naming the scheme and the position of the bad secret
 */
export function assertUsableSecrets(scheme: string, secrets: readonly string[]): void {
  if (secrets.length === 0) {
    throw new InvalidSigningSecretError(`${scheme}: no signing secret was given`);
  }
  secrets.forEach((secret, index) => {
    if (secret.length === 0) {
      throw new InvalidSigningSecretError(`${scheme}: signing secret #${index + 1} is empty`);
    }
  });
}
