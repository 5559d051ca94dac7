import { describe, expect, it } from 'vitest';
import { KeyHashes, hash52 } from '../../lambdas/reconciler/key-hashes.ts';

describe('the reconciler\'s key hashes', () => {
  it('gives 52-bit integers that differ by seed, with no collision among 200,000 keys', () => {
    const keys = Array.from({ length: 200_000 }, (_, i) => `pay\u0000evt_${i}`);
    const set = new KeyHashes();
    for (const k of keys) set.add(hash52(k, 7));
    set.seal();
    expect(set.repeated().size).toBe(0);
    const h = hash52('pay\u0000evt_1', 7);
    expect(Number.isSafeInteger(h) && h >= 0 && h < 2 ** 52).toBe(true);
    expect(hash52('pay\u0000evt_1', 8)).not.toBe(h);
  });

  it('counts, finds repeats once, and subtracts another set', () => {
    const a = new KeyHashes();
    for (const h of [5, 1, 5, 9, 5, 3, 3]) a.add(h);
    a.seal();
    const b = new KeyHashes();
    b.addAll(new Float64Array([3, 4]));
    b.seal();
    expect([a.count(5), a.count(3), a.count(2), a.has(9), a.has(2)]).toEqual([3, 2, 0, true, false]);
    expect([...a.repeated().values()]).toEqual([3, 5]);
    expect([...a.without(b).values()]).toEqual([1, 5, 9]);
    expect(() => {
      a.add(1);
    }).toThrow('add after seal');
  });
});
