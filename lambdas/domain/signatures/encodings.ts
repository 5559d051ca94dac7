/**
 * Strict decoders for the digests senders put in headers. Buffer.from(text, 'hex' | 'base64')
 * is lenient: it stops at the first bad character or skips it, so "abc!" would quietly
 * decode to fewer bytes. Here a digest either has the exact shape of its size (32 bytes, or
 * 64 for an ed25519 signature) or it is malformed, and the caller can tell the sender's
 * garbage from a wrong signature.
 */

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;
/** 32 bytes in standard base64: 43 characters and one padding "=". */
const BASE64_DIGEST = /^[A-Za-z0-9+/]{43}=$/;
/** 64 bytes (an ed25519 signature) in standard base64: 86 characters and two padding "=". */
const BASE64_ED25519_SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;
/** Any standard, padded base64 text (Standard Webhooks secrets). */
const BASE64_TEXT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes a 64-character hex SHA-256 digest; undefined when the text has any other shape. */
export function decodeHexDigest(text: string): Buffer | undefined {
  return HEX_DIGEST.test(text) ? Buffer.from(text, 'hex') : undefined;
}

/** Decodes a 44-character base64 SHA-256 digest; undefined when the text has any other shape. */
export function decodeBase64Digest(text: string): Buffer | undefined {
  return BASE64_DIGEST.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** Decodes an 88-character base64 ed25519 signature (64 bytes); undefined when the text has any other shape. */
export function decodeBase64Ed25519Signature(text: string): Buffer | undefined {
  return BASE64_ED25519_SIGNATURE.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** Decodes non-empty, padded standard base64; undefined when the text is anything else. */
export function decodeBase64(text: string): Buffer | undefined {
  if (text.length === 0 || !BASE64_TEXT.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}
