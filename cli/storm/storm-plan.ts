/**
 * The storm's plan: for each event, which sender behaviours it gets. Pure and seeded, so
 * a failing run can be replayed with the same --seed.
 */

export interface StormMix {
  /** Copies of the first attempt sent at once: 1 to this. */
  readonly maxConcurrentCopies: number;
  /** Share of answers the sender treats as lost (a timeout), so it retries. */
  readonly lostAck: number;
  /** Share of events whose key is reused later with another payload (expect 422). */
  readonly mismatch: number;
  /** Share of events preceded by a forged copy with a bad signature (expect 401). */
  readonly badSignature: number;
  /** Share of events preceded by a copy with a stale timestamp (expect 401). */
  readonly stale: number;
  /** Share of events whose action is slower than the ladder's third step. */
  readonly slow: number;
  /** Share of events whose action fails retryably once or twice, then succeeds. */
  readonly fail: number;
  /** Share of events whose action never succeeds: they end FAILED, in the DLQ with the reason. */
  readonly deadLetter: number;
  /** Share of events whose worker "dies" after the effect, before its completion write. */
  readonly crash: number;
}

export const DEFAULT_MIX: StormMix = {
  maxConcurrentCopies: 3,
  lostAck: 0.2,
  mismatch: 0.05,
  badSignature: 0.05,
  stale: 0.05,
  slow: 0.05,
  fail: 0.1,
  deadLetter: 0.02,
  crash: 0.03,
};

export type ExpectedEnd = 'completed' | 'dead-lettered';

export interface EventPlan {
  readonly index: number;
  readonly amount: number;
  readonly simulate: Readonly<Record<string, unknown>> | undefined;
  readonly copies: number;
  /** Per attempt (first, then one per ladder step): is that answer lost on its way back? */
  readonly lostAcks: readonly boolean[];
  readonly mismatch: boolean;
  readonly badSignature: boolean;
  readonly stale: boolean;
  readonly behaviours: readonly string[];
  readonly expect: ExpectedEnd;
}

/** mulberry32: small, fast, good enough to mix behaviours. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Plans `events` events. The action behaviours (slow, fail, dead-letter, crash) exclude
 * each other, so each outcome has one cause; the sender behaviours combine freely.
 * @param slowDelayMs the delay a slow action takes
 */
export function planStorm(events: number, mix: StormMix, ladderSteps: number, slowDelayMs: number, seed: number): EventPlan[] {
  const random = seededRandom(seed);
  const chance = (share: number): boolean => random() < share;
  return Array.from({ length: events }, (_, index) => {
    const behaviours: string[] = [];
    const copies = 1 + Math.floor(random() * mix.maxConcurrentCopies);
    if (copies > 1) behaviours.push('concurrent-duplicates');
    const lostAcks = Array.from({ length: ladderSteps + 1 }, () => chance(mix.lostAck));
    if (lostAcks[0] === true) behaviours.push('lost-ack');
    const mismatch = chance(mix.mismatch);
    const badSignature = chance(mix.badSignature);
    const stale = chance(mix.stale);
    if (mismatch) behaviours.push('mismatched-payload');
    if (badSignature) behaviours.push('bad-signature');
    if (stale) behaviours.push('stale-timestamp');
    let simulate: Record<string, unknown> | undefined;
    let expect: ExpectedEnd = 'completed';
    const roll = random();
    const bands: [number, () => void][] = [
      [mix.slow, () => { simulate = { delayMs: slowDelayMs }; behaviours.push('slow-action'); }],
      [mix.fail, () => { simulate = { failAttempts: 1 + Math.floor(random() * 2) }; behaviours.push('injected-failure'); }],
      [mix.deadLetter, () => { simulate = { failAttempts: 999 }; expect = 'dead-lettered'; behaviours.push('never-succeeds'); }],
      [mix.crash, () => { simulate = { crashAfterEffect: true }; behaviours.push('crash-after-effect'); }],
    ];
    let floor = 0;
    for (const [share, apply] of bands) {
      if (roll >= floor && roll < floor + share) {
        apply();
        break;
      }
      floor += share;
    }
    return { index, amount: 100 + index, simulate, copies, lostAcks, mismatch, badSignature, stale, behaviours, expect };
  });
}

/** Parses a ladder such as `1s,5s,30s,5m` into milliseconds. */
export function parseLadder(text: string): number[] | undefined {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const steps = text.split(',').map((part) => {
    const m = /^\s*(\d+(?:\.\d+)?)(ms|s|m|h)\s*$/.exec(part);
    return m?.[1] === undefined || m[2] === undefined ? Number.NaN : Number(m[1]) * (units[m[2]] ?? Number.NaN);
  });
  return steps.length > 0 && steps.every((s) => Number.isFinite(s) && s > 0) ? steps : undefined;
}

/** The q-quantile of sorted numbers (nearest rank). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? 0;
}
