import { createHash } from 'node:crypto';

/**
 * The operation fingerprint of an attempt: SHA-256 over route, key, action name and the
 * input's fingerprint, NUL-separated so no two tuples hash alike.
 */
export function operationFingerprint(route: string, key: string, action: string, inputFingerprint: string): string {
  return createHash('sha256').update([route, key, action, inputFingerprint].join('\u0000')).digest('hex');
}
