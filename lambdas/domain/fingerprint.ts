import { createHash } from 'node:crypto';

/** SHA-256 of the exact bytes received, hex. Two deliveries with one key must match it. */
export function fingerprint(rawBody: Buffer): string {
  return createHash('sha256').update(rawBody).digest('hex');
}
