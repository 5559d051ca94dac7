/**
 * What SQS can carry. A work message holds the body JSON-escaped, so a body within the
 * route's limit can still be too large for SQS (a body of backslashes doubles), and SQS
 * refuses some characters outright (U+FFFE, U+FFFF) that JSON leaves as they are.
 */
import { Buffer } from 'node:buffer';

/** SQS's message size limit, body and attributes together: 256 KiB, the limit of every queue. */
export const SQS_MAX_MESSAGE_BYTES = 262_144;

/**
 * Room kept for what a dead-letter copy adds to the work message (reason, last error of at
 * most 500 characters, attempts, its id) and for the message attributes (route, key, reason).
 */
export const QUEUE_RESERVE_BYTES = 2_048;

// SQS accepts #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.
const REFUSED_BY_SQS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Why this serialised work message cannot travel on SQS with room for its dead-letter copy; undefined when it can. */
export function unqueueableReason(serialised: string): string | undefined {
  const bytes = Buffer.byteLength(serialised, 'utf8');
  if (bytes + QUEUE_RESERVE_BYTES > SQS_MAX_MESSAGE_BYTES) {
    return `The body becomes a ${bytes}-byte queue message once escaped; the queue carries at most ${SQS_MAX_MESSAGE_BYTES - QUEUE_RESERVE_BYTES}. Send a smaller body.`;
  }
  const refused = REFUSED_BY_SQS.exec(serialised);
  if (refused !== null) {
    const code = refused[0].codePointAt(0) ?? 0;
    return `The body contains the character U+${code.toString(16).toUpperCase().padStart(4, '0')}, which SQS cannot carry.`;
  }
  return undefined;
}
