/**
 * Fixed signing secrets, for the local stack, the benchmarks and the tests: there is no
 * local Secrets Manager. It lives with the local stack, off the deployed functions' paths.
 */
import { parseSecretValue } from '../lambdas/ports/secret-source.ts';
import type { SecretSource } from '../lambdas/ports/secret-source.ts';

/** Secrets by name, each the secret itself or JSON `{"current", "previous"}` as in Secrets Manager. */
export class StaticSecretSource implements SecretSource {
  readonly #secrets: ReadonlyMap<string, string>;
  constructor(secrets: Readonly<Record<string, string>>) {
    this.#secrets = new Map(Object.entries(secrets));
  }
  secretsFor(secretName: string): Promise<readonly string[]> {
    const value = this.#secrets.get(secretName);
    if (value === undefined) return Promise.reject(new Error(`no local secret named ${secretName}`));
    return Promise.resolve(parseSecretValue(value));
  }
}
