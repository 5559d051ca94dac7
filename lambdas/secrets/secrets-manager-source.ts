/**
 * Signing secrets from Secrets Manager through Powertools Parameters, which caches each
 * value in the function for `maxAge` seconds: one fetch per secret per container and
 * minute, and a rotated secret is picked up within that minute.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { parseSecretValue } from '../ports/secret-source.ts';
import type { SecretSource } from '../ports/secret-source.ts';

export class SecretsManagerSource implements SecretSource {
  readonly #provider: SecretsProvider;
  readonly #maxAgeSeconds: number;

  /** @param maxAgeSeconds how long a value is cached. @default 60 */
  constructor(provider: SecretsProvider = new SecretsProvider(), maxAgeSeconds = 60) {
    this.#provider = provider;
    this.#maxAgeSeconds = maxAgeSeconds;
  }

  async secretsFor(secretName: string): Promise<readonly string[]> {
    const value = await this.#provider.get(secretName, { maxAge: this.#maxAgeSeconds });
    if (typeof value !== 'string') throw new Error(`secret ${secretName} has no string value`);
    return parseSecretValue(value);
  }
}
