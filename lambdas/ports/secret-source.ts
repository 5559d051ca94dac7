/** Signing secrets of a route: the current one first, then the previous one during a rotation. */
export interface SecretSource {
  secretsFor(secretName: string): Promise<readonly string[]>;
}

/**
 * Reads a secret value: a bare string, or JSON `{"current": "...", "previous": "..."}`
 * while a sender rotates its secret and both must be accepted.
 * @throws Error when the value is empty or the JSON has no current secret
 */
export function parseSecretValue(value: string): readonly string[] {
  const trimmed = value.trim();
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new Error('the secret looks like JSON but does not parse');
    }
    const { current, previous } = (parsed ?? {}) as { current?: unknown; previous?: unknown };
    if (typeof current !== 'string' || current === '') throw new Error('the secret JSON has no "current" string');
    return typeof previous === 'string' && previous !== '' ? [current, previous] : [current];
  }
  if (trimmed === '') throw new Error('the secret is empty');
  return [trimmed];
}
