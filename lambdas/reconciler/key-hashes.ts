/**
 * What the reconciler remembers of a window: a 52-bit hash per key, eight bytes each in a
 * Float64Array, never an object per record (why: docs/architecture.md#a-day-of-traffic-is-large).
 *
 * The hash is not cryptographic but seeded per run: keys are chosen by senders, and a seed
 * they cannot know keeps them from crafting collisions ahead of time. A collision can only make
 * two keys look alike to a set: it may hide one missing-effect or orphan report (each such key
 * collides with any of n others with odds n / 2^52, about 2e-10 at a million), and it never
 * reverses anything, since a reversal is decided on the entries' exact keys.
 */

/** A 52-bit hash of a string, an integer a double holds exactly. Two 32-bit lanes, each finalised. */
export function hash52(text: string, seed: number): number {
  let a = 0x9e3779b9 ^ seed;
  let b = 0x85ebca6b ^ Math.imul(seed, 0x27d4eb2f);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  a = Math.imul(a, 0xc2b2ae35);
  a ^= a >>> 16;
  b ^= b >>> 16;
  b = Math.imul(b, 0x7feb352d);
  b ^= b >>> 15;
  b = Math.imul(b, 0x846ca68b);
  b ^= b >>> 16;
  a ^= Math.imul(b, 0x9e3779b1);
  return (b >>> 12) * 0x1_0000_0000 + (a >>> 0);
}

/**
 * A multiset of key hashes: appended to, then sealed (sorted) once, then asked. Grows by
 * doubling, so it holds at most twice its entries' eight bytes while it fills.
 */
export class KeyHashes {
  #values = new Float64Array(1024);
  #size = 0;
  #sealed = false;

  get size(): number {
    return this.#size;
  }

  add(hash: number): void {
    if (this.#sealed) throw new Error('KeyHashes: add after seal');
    if (this.#size === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#size++] = hash;
  }

  addAll(hashes: Float64Array): void {
    for (const h of hashes) this.add(h);
  }

  /** A copy of the hashes added, in the order added (before seal) or sorted (after). */
  values(): Float64Array {
    return this.#values.slice(0, this.#size);
  }

  /** Sorts the hashes (a typed array sorts numerically, in place) and gives back the spare room. */
  seal(): this {
    if (this.#sealed) return this;
    this.#values = this.#values.slice(0, this.#size).sort();
    this.#sealed = true;
    return this;
  }

  /** How many times `hash` was added. */
  count(hash: number): number {
    const first = this.#lowerBound(hash);
    let end = first;
    while (end < this.#size && this.#values[end] === hash) end++;
    return end - first;
  }

  has(hash: number): boolean {
    const at = this.#lowerBound(hash);
    return at < this.#size && this.#values[at] === hash;
  }

  /** Each hash added more than once, once. */
  repeated(): KeyHashes {
    const out = new KeyHashes();
    const v = this.#sorted();
    for (let i = 1; i < this.#size; i++) {
      if (v[i] === v[i - 1] && (i === 1 || v[i] !== v[i - 2])) out.add(v[i] as number);
    }
    return out.seal();
  }

  /** Each distinct hash of this set that `other` does not hold. */
  without(other: KeyHashes): KeyHashes {
    const out = new KeyHashes();
    const v = this.#sorted();
    for (let i = 0; i < this.#size; i++) {
      const h = v[i] as number;
      if ((i === 0 || v[i - 1] !== h) && !other.has(h)) out.add(h);
    }
    return out.seal();
  }

  #sorted(): Float64Array {
    if (!this.#sealed) throw new Error('KeyHashes: read before seal');
    return this.#values;
  }

  #lowerBound(hash: number): number {
    const v = this.#sorted();
    let lo = 0;
    let hi = this.#size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((v[mid] as number) < hash) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
