/**
 * The shared pieces under every scheme. Constant-time comparison itself cannot be observed
 * from a unit test; review that digest.ts compares with crypto.timingSafeEqual and that
 * no scheme compares signatures with === (they only ever compare decoded digests through
 * digestsEqual). What can be tested is that the helper never throws on unequal lengths.
 */
import { describe, expect, it } from 'vitest';
import { anyDigestMatches, digestsEqual, hmacSha256 } from '../../lambdas/domain/signatures/digest.ts';
import {
  decodeBase64,
  decodeBase64Digest,
  decodeBase64Ed25519Signature,
  decodeHexDigest,
} from '../../lambdas/domain/signatures/encodings.ts';
import { isWithinTolerance, parseUnixSeconds } from '../../lambdas/domain/signatures/timestamp.ts';

describe('digestsEqual', () => {
  it('answers false, without throwing, for digests of different lengths', () => {
    const digest = hmacSha256('k', [Buffer.from('body')]);
    expect(digestsEqual(digest, digest.subarray(0, 31))).toBe(false);
    expect(digestsEqual(Buffer.alloc(0), digest)).toBe(false);
  });

  it('answers true only for identical bytes', () => {
    const digest = hmacSha256('k', [Buffer.from('body')]);
    const flipped = Buffer.from(digest);
    flipped[31] = flipped[31]! ^ 1;
    expect(digestsEqual(digest, Buffer.from(digest))).toBe(true);
    expect(digestsEqual(digest, flipped)).toBe(false);
  });
});

describe('hmacSha256', () => {
  it('feeds the parts as one message: a split anywhere gives the same digest', () => {
    const whole = hmacSha256('k', [Buffer.from('123.{"a":1}')]);
    expect(hmacSha256('k', ['123.', Buffer.from('{"a":1}')])).toEqual(whole);
    expect(hmacSha256('k', ['12', '3.{"a"', Buffer.from(':1}')])).toEqual(whole);
  });
});

describe('anyDigestMatches', () => {
  it('computes each key once and tries it against every candidate', () => {
    // Prepare
    const calls: string[] = [];
    const digestFor = (key: string) => {
      calls.push(key);
      return hmacSha256(key, [Buffer.from('m')]);
    };
    const candidates = [Buffer.alloc(32), hmacSha256('previous', [Buffer.from('m')])];
    // Act
    const matched = anyDigestMatches(['current', 'previous'], candidates, digestFor);
    // Assess
    expect(matched).toBe(true);
    expect(calls).toEqual(['current', 'previous']);
  });
});

describe('strict decoders', () => {
  it('decode only the exact shape of a 32-byte digest', () => {
    const digest = hmacSha256('k', [Buffer.from('x')]);
    expect(decodeHexDigest(digest.toString('hex'))).toEqual(digest);
    expect(decodeBase64Digest(digest.toString('base64'))).toEqual(digest);
    // Buffer.from would quietly decode these to fewer or different bytes.
    expect(decodeHexDigest(`${digest.toString('hex').slice(0, 63)}g`)).toBeUndefined();
    expect(decodeHexDigest(digest.toString('hex').slice(0, 62))).toBeUndefined();
    expect(decodeBase64Digest(`${digest.toString('base64').slice(0, 42)}!=`)).toBeUndefined();
    expect(decodeBase64Digest(digest.toString('base64url'))).toBeUndefined();
  });

  it('decode only the exact shape of a 64-byte ed25519 signature', () => {
    const signature = Buffer.concat([hmacSha256('a', [Buffer.from('x')]), hmacSha256('b', [Buffer.from('x')])]);
    const text = signature.toString('base64');
    expect(decodeBase64Ed25519Signature(text)).toEqual(signature);
    expect(decodeBase64Ed25519Signature(text.replace(/==$/, ''))).toBeUndefined();
    expect(decodeBase64Ed25519Signature(signature.toString('base64url'))).toBeUndefined();
    expect(decodeBase64Ed25519Signature(signature.subarray(0, 63).toString('base64'))).toBeUndefined();
    expect(decodeBase64Ed25519Signature(signature.subarray(0, 32).toString('base64'))).toBeUndefined();
    expect(decodeBase64Ed25519Signature(`${text.slice(0, 85)}!==`)).toBeUndefined();
  });

  it('decode base64 secrets only when padded and in the standard alphabet', () => {
    expect(decodeBase64('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')?.length).toBe(24);
    expect(decodeBase64('YQ==')).toEqual(Buffer.from('a'));
    expect(decodeBase64('YQ')).toBeUndefined();
    expect(decodeBase64('')).toBeUndefined();
    expect(decodeBase64('not base64!')).toBeUndefined();
  });
});

describe('timestamps', () => {
  it.each(['0', '1800000000', '999999999999'])('reads %j', (text) => {
    expect(parseUnixSeconds(text)).toBe(Number(text));
  });

  it.each(['', '-1', '+1', '1.5', '1e9', ' 1', '0x10', '1000000000000'])('refuses %j', (text) => {
    expect(parseUnixSeconds(text)).toBeUndefined();
  });

  it('is symmetric around now and inclusive at the edge', () => {
    expect(isWithinTolerance(1000 - 300, 1000, 300)).toBe(true);
    expect(isWithinTolerance(1000 + 300, 1000, 300)).toBe(true);
    expect(isWithinTolerance(1000 - 301, 1000, 300)).toBe(false);
    expect(isWithinTolerance(1000 + 301, 1000, 300)).toBe(false);
  });
});
