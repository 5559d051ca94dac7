/**
 * Standard Webhooks key material. The prefix says what a key is, as the spec intends ("a
 * unique and consistent secret format allows implementations to correctly use the correct
 * scheme without additional configuration"), so a route needs no setting to pick v1 or v1a:
 * - `whsec_<base64>`: a shared HMAC secret; signs and verifies `v1` entries.
 * - `whpk_<base64>`: an ed25519 public key; verifies `v1a` entries. What a receiver holds.
 * - `whsk_<base64>`: an ed25519 private key; signs `v1a` entries. Only the sender holds it.
 *
 * The spec says no more than "base64 encoded, standard ed25519 key pair". The encodings in
 * use differ in length, so all of them are read without ambiguity:
 * - `whpk_`: the raw 32-byte key (Svix, the spec's authors, and Go's ed25519.PublicKey), or
 *   the 44-byte DER SubjectPublicKeyInfo a Java KeyPairGenerator writes (Cosium's
 *   standard-webhooks-consumer reads that form).
 * - `whsk_`: the 32-byte RFC 8032 seed, or 64 bytes of seed then public key (Svix's
 *   ed25519-compact KeyPair, Go's ed25519.PrivateKey, libsodium). We write the 64-byte form.
 * Key objects are built from DER with fixed RFC 8410 headers rather than a raw-key import,
 * which not every Node 24 minor has; OpenSSL then does the curve arithmetic.
 */
import { createPrivateKey, createPublicKey, createSecretKey, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { decodeBase64 } from './encodings.ts';
import { InvalidSigningSecretError } from './signing-secret-error.ts';

/** The three key prefixes of the spec. */
export const STANDARD_WEBHOOKS_KEY_PREFIXES = {
  secret: 'whsec_',
  publicKey: 'whpk_',
  signingKey: 'whsk_',
} as const;

const { secret: SECRET, publicKey: PUBLIC, signingKey: SIGNING } = STANDARD_WEBHOOKS_KEY_PREFIXES;

const KEY_BYTES = 32;
/** RFC 8410 DER SubjectPublicKeyInfo header of an Ed25519 key; the 32 key bytes follow. */
const SPKI_HEADER = Buffer.from('302a300506032b6570032100', 'hex');
/** RFC 8410 DER PKCS#8 header of an Ed25519 private key; the 32-byte seed follows. */
const PKCS8_HEADER = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A key ready for node:crypto, with the signature version it makes or checks. */
export interface StandardWebhooksKey {
  /** `v1`: HMAC-SHA256 with a secret key. `v1a`: ed25519 with a public (verify) or private (sign) key. */
  readonly version: 'v1' | 'v1a';
  readonly key: KeyObject;
}

/** A v1a key pair in the spec's serialization. */
export interface StandardWebhooksKeyPair {
  /** `whsk_<base64>`: the sender signs with it; it never leaves the sender. */
  readonly signingKey: string;
  /** `whpk_<base64>`: the receiver verifies with it; it need not be kept secret. */
  readonly publicKey: string;
}

function unusable(message: string): InvalidSigningSecretError {
  // The message names the kind of key and never its text.
  return new InvalidSigningSecretError(`standard-webhooks: ${message}`);
}

/** The HMAC key of a `whsec_` (or bare base64) secret: the decoded bytes, not the text. */
function hmacKey(secret: string): StandardWebhooksKey {
  const bytes = decodeBase64(secret.startsWith(SECRET) ? secret.slice(SECRET.length) : secret);
  if (bytes === undefined) throw unusable('a signing secret is not whsec_ followed by base64');
  return { version: 'v1', key: createSecretKey(bytes) };
}

function publicKeyFromBytes(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_HEADER, raw]), format: 'der', type: 'spki' });
}

/** Key bytes from an exported JWK field; JWK is the one raw-bytes export every supported Node has. */
function jwkBytes(value: string | undefined): Buffer {
  if (value === undefined) throw new Error('node:crypto exported an ed25519 JWK without its key bytes');
  return Buffer.from(value, 'base64url');
}

function rawPublicKey(key: KeyObject): Buffer {
  return jwkBytes(key.export({ format: 'jwk' }).x);
}

function ed25519PublicKey(secret: string): StandardWebhooksKey {
  const bytes = decodeBase64(secret.slice(PUBLIC.length));
  let raw: Buffer | undefined;
  if (bytes?.length === KEY_BYTES) raw = bytes;
  else if (bytes?.length === SPKI_HEADER.length + KEY_BYTES && bytes.subarray(0, SPKI_HEADER.length).equals(SPKI_HEADER)) {
    raw = bytes.subarray(SPKI_HEADER.length);
  }
  if (raw === undefined) throw unusable('a whpk_ public key is not base64 of a 32-byte ed25519 key');
  // Any 32 bytes import; bytes that are not a point on the curve simply never verify.
  return { version: 'v1a', key: publicKeyFromBytes(raw) };
}

function ed25519PrivateKey(secret: string): KeyObject {
  const bytes = decodeBase64(secret.slice(SIGNING.length));
  if (bytes === undefined || (bytes.length !== KEY_BYTES && bytes.length !== 2 * KEY_BYTES)) {
    throw unusable('a whsk_ signing key is not base64 of a 32-byte ed25519 seed or a 64-byte seed and public key');
  }
  const seed = bytes.subarray(0, KEY_BYTES);
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_HEADER, seed]), format: 'der', type: 'pkcs8' });
  // The 64-byte form repeats the public key; one that does not belong to the seed is a corrupt key.
  if (bytes.length === 2 * KEY_BYTES && !rawPublicKey(createPublicKey(key)).equals(bytes.subarray(KEY_BYTES))) {
    throw unusable('a whsk_ signing key holds a public key that does not belong to its seed');
  }
  return key;
}

/**
 * Reads a secret a receiver holds: `whpk_` checks `v1a` entries, `whsec_` (or bare base64)
 * checks `v1` entries.
 * @throws InvalidSigningSecretError for a key of neither shape, and for a `whsk_` private
 *   key: a receiver holding the sender's signing key is a leak, not a configuration to honour
 */
export function readStandardWebhooksVerifyKey(secret: string): StandardWebhooksKey {
  if (secret.startsWith(PUBLIC)) return ed25519PublicKey(secret);
  if (secret.startsWith(SIGNING)) {
    throw unusable('a receiver was given a whsk_ private signing key; configure its whpk_ public key instead');
  }
  return hmacKey(secret);
}

/**
 * Reads a secret a sender signs with: `whsk_` signs `v1a`, `whsec_` (or bare base64) signs `v1`.
 * @throws InvalidSigningSecretError for a key of neither shape, and for a `whpk_` public key,
 *   which cannot sign
 */
export function readStandardWebhooksSigningKey(secret: string): StandardWebhooksKey {
  if (secret.startsWith(SIGNING)) return { version: 'v1a', key: ed25519PrivateKey(secret) };
  if (secret.startsWith(PUBLIC)) throw unusable('a whpk_ public key cannot sign; sign with its whsk_ private key');
  return hmacKey(secret);
}

/**
 * The `whpk_` public key of a `whsk_` signing key, as a receiver should be configured with it
 * (raw 32 bytes, base64).
 * @throws InvalidSigningSecretError when `signingKey` is not a usable `whsk_` key
 */
export function standardWebhooksPublicKeyOf(signingKey: string): string {
  if (!signingKey.startsWith(SIGNING)) throw unusable('a signing key does not start with whsk_');
  return `${PUBLIC}${rawPublicKey(createPublicKey(ed25519PrivateKey(signingKey))).toString('base64')}`;
}

/** A fresh v1a key pair: `whsk_` is 64 bytes (seed, then public key, as Svix writes it), `whpk_` the raw 32-byte public key. */
export function generateStandardWebhooksKeyPair(): StandardWebhooksKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = jwkBytes(privateKey.export({ format: 'jwk' }).d);
  const raw = rawPublicKey(publicKey);
  return {
    signingKey: `${SIGNING}${Buffer.concat([seed, raw]).toString('base64')}`,
    publicKey: `${PUBLIC}${raw.toString('base64')}`,
  };
}
