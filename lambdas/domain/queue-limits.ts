/**
 * What SQS can carry. A work message holds the body JSON-escaped, so a body within the
 * route's limit can still be too large for SQS (a body of backslashes doubles), and SQS
 * refuses some characters outright (U+FFFE, U+FFFF) that JSON leaves as they are.
 */
import { Buffer } from 'node:buffer';
import type { WorkMessage } from './event-record.ts';

/**
 * The most the receiver puts in one SQS message, body and attributes together: 256 KiB. SQS
 * takes up to 1 MiB since 2026-01-29, a new queue's default MaximumMessageSize (SQS API
 * Reference, CreateQueue, in client-sqs's models_0.d.ts; AWS Compute Blog, "More room to build:
 * serverless services now support payloads up to 1 MB"), but each queue's own attribute binds
 * and the construct sets none, so a queue made earlier may still hold 256 KiB. The smaller one
 * fits every queue; the larger would gain little, since a record may keep an inline body and a
 * DynamoDB item holds 400 KB (docs/large-payloads.md, "What SQS carries").
 */
export const SQS_MAX_MESSAGE_BYTES = 262_144;

/** A dead-letter copy's last error is cut to this many characters (UTF-16 units). */
export const LAST_ERROR_MAX_CHARS = 500;
/** A dead-letter copy's reason is cut to this many characters. */
export const DEAD_LETTER_REASON_MAX_CHARS = 200;
/** The longest dead-letter id a copy carries: a UUID is 36; room for a caller's own ids. */
export const DEAD_LETTER_ID_MAX_CHARS = 64;
/** A route's maxAttempts is at most 100 (config-schema.ts), so a copy's attempts has at most 3 digits. */
const MAX_ATTEMPTS = 100;
/** The longest route name (config-schema.ts) and key (idempotency-key.ts, printable ASCII). */
const MAX_ROUTE_CHARS = 63;
const MAX_KEY_CHARS = 255;

/** The widest one UTF-16 unit gets in UTF-8, unescaped (a message attribute's value): 3 bytes. */
const WIDEST_UTF8_BYTES = 3;

/**
 * The message attributes SqsWorkQueue sends beside the body: the route, the key and, on a
 * dead-letter copy, its reason. "All parts of the message attribute, including Name, Type, and
 * Value, are part of the message size restriction" (SQS API Reference, MessageAttributeValue;
 * node_modules/@aws-sdk/client-sqs/dist-types/models/models_0.d.ts).
 */
export function messageAttributesOf(message: WorkMessage): Record<string, string> {
  return { route: message.route, key: message.key, ...(message.reason === undefined ? {} : { reason: message.reason }) };
}

/** The bytes SQS counts for a message: its JSON body, and each attribute's name, type ('String') and value. */
export function sqsMessageBytes(message: WorkMessage): number {
  let bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
  for (const [name, value] of Object.entries(messageAttributesOf(message))) {
    bytes += Buffer.byteLength(name, 'utf8') + 'String'.length + Buffer.byteLength(value, 'utf8');
  }
  return bytes;
}

/**
 * The most a dead-letter copy (the executor's, or the reconciler's re-send of it) adds to its
 * work message, computed from the largest copy there can be rather than guessed: every field it
 * adds (attempts, lastError, reason, deadLetterId) at its longest, each character at its widest
 * once escaped, and every message attribute (route, key and reason, names and types included),
 * since the ingest checks the body alone. A body that fits with this much to spare fits as its
 * largest dead-letter copy too, so a copy never overflows after `fail` has committed.
 */
export function deadLetterReserveBytes(): number {
  // The widest a character gets once JSON-escaped: a control character (or a lone surrogate)
  // becomes `\u00XX` (`\udXXX`), 6 bytes; anything else takes at most 4 bytes for two UTF-16
  // units, or 3 for one.
  const widest = (chars: number): string => '\u0001'.repeat(chars);
  const added = {
    attempts: MAX_ATTEMPTS,
    lastError: widest(LAST_ERROR_MAX_CHARS),
    reason: widest(DEAD_LETTER_REASON_MAX_CHARS),
    deadLetterId: widest(DEAD_LETTER_ID_MAX_CHARS),
  };
  // `{...}` becomes `,...` once inside the work message: the braces go, one comma comes.
  const fields = Buffer.byteLength(JSON.stringify(added), 'utf8') - 1;
  const attribute = (name: string, chars: number, perChar: number): number => name.length + 'String'.length + chars * perChar;
  const attributes =
    attribute('route', MAX_ROUTE_CHARS, 1) + attribute('key', MAX_KEY_CHARS, 1) + attribute('reason', DEAD_LETTER_REASON_MAX_CHARS, WIDEST_UTF8_BYTES);
  return fields + attributes;
}

/**
 * Room kept for what a dead-letter copy adds to the work message and for the message
 * attributes: deadLetterReserveBytes(), 5,594 B (the old guess of 2,048 B could not hold a copy whose
 * 500-character last error escaped to about 3 KB).
 */
export const QUEUE_RESERVE_BYTES = deadLetterReserveBytes();

// SQS accepts #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.
const REFUSED_BY_SQS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

const REFUSED_BY_SQS_ALL = new RegExp(REFUSED_BY_SQS.source, 'gu');

/**
 * Cuts a text to `max` UTF-16 units (a dead-letter copy's last error or reason) and replaces each
 * character SQS refuses with U+FFFD: an action's error text must never keep its copy off the
 * queue once `fail` has committed (SendMessage answers InvalidMessageContents).
 */
export function cut(text: string, max: number): string {
  return (text.length <= max ? text : text.slice(0, max)).replace(REFUSED_BY_SQS_ALL, '\uFFFD');
}

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
