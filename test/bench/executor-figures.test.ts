import { describe, expect, it } from 'vitest';
import { acceptToEffect, executorGoalsOf, mergeExecutorRounds, roundSpread } from '../../bench/executor-figures.ts';
import type { ExecutorMeasurements, ExecutorRound, ExecutorScenario } from '../../bench/executor-figures.ts';
import { executorRound } from './executor-round.ts';

/** A round of the consumer's shape: a put and an update a message, ten latencies. */
function round(over: Partial<ExecutorRound> = {}): ExecutorRound {
  return executorRound({ byOperation: { PutItemCommand: 10, UpdateItemCommand: 10 }, writeUnits: 20, frontRequests: 0, latenciesMs: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], ...over });
}

const scenario = (rounds: ExecutorRound[]): ExecutorScenario => mergeExecutorRounds(rounds);

function measurements(rp: ExecutorRound, pt: ExecutorRound): ExecutorMeasurements {
  const pair = { retryproof: scenario([rp, rp]), powertools: scenario([pt, pt]) };
  return { backlog: pair, rest: pair, storm: pair, resent: pair };
}

describe('acceptToEffect', () => {
  it('times each key from its acceptance to its first effect, and counts the runs beyond the first', () => {
    // Prepare
    const accepted = new Map([
      ['a', 1000],
      ['b', 1005],
    ]);
    const effects = [
      { key: 'b', at: 1012 },
      { key: 'a', at: 1003, inBatchMs: 2 },
      { key: 'a', at: 1001.5, inBatchMs: 0.5 },
      { key: 'stray', at: 1020 },
    ];
    // Act
    const out = acceptToEffect(accepted, effects);
    // Assess: the earlier of a's two runs is its effect; the stray key is not ours.
    expect(out.latenciesMs.sort((x, y) => x - y)).toEqual([1.5, 7]);
    expect(out).toMatchObject({ executed: 2, keysMoreThanOnce: 1, unknownKeys: 1 });
    // The handler's part is the first run's; a key without it (b) has none.
    expect(out.inBatchMs).toEqual([0.5]);
  });

  it('leaves out a key that was accepted but never executed', () => {
    // Act
    const out = acceptToEffect(new Map([['a', 1], ['b', 2]]), [{ key: 'a', at: 4 }]);
    // Assess
    expect(out).toEqual({ latenciesMs: [3], inBatchMs: [], executed: 1, keysMoreThanOnce: 0, unknownKeys: 0 });
  });
});

describe('mergeExecutorRounds', () => {
  it('divides by executed messages, not by deliveries or receives, and sums the wall time for the throughput', () => {
    // Prepare: a storm round where 4 of 14 deliveries were duplicates the consumer received too.
    const r1 = round({ deliveries: 14, received: 14, executed: 10, requests: 24, refusedWrites: 4, wallMs: 200 });
    const r2 = round({ deliveries: 14, received: 14, executed: 10, requests: 24, refusedWrites: 4, wallMs: 300, cpuMicros: 40_000 });
    // Act
    const merged = mergeExecutorRounds([r1, r2]);
    // Assess
    expect(merged.requestsPerExecuted).toBeCloseTo(2.4);
    expect(merged.refusedWritesPerExecuted).toBeCloseTo(0.4);
    expect(merged.cpuMsPerExecuted).toBeCloseTo(3);
    expect(merged.throughput).toBeCloseTo(40);
    expect(merged.byOperation).toEqual({ PutItemCommand: 20, UpdateItemCommand: 20 });
    expect(merged.p50).toBe(5);
  });

  it('refuses to merge no rounds', () => {
    expect(() => mergeExecutorRounds([])).toThrow('no rounds');
  });
});

describe('roundSpread', () => {
  it('is the lowest and highest ratio of paired rounds', () => {
    // Prepare
    const rp = scenario([round({ cpuMicros: 30_000 }), round({ cpuMicros: 10_000 })]);
    const pt = scenario([round({ cpuMicros: 20_000 }), round({ cpuMicros: 20_000 })]);
    // Act
    const [lo, hi] = roundSpread(rp, pt, (s) => s.cpuMsPerExecuted);
    // Assess
    expect(lo).toBeCloseTo(0.5);
    expect(hi).toBeCloseTo(1.5);
  });
});

describe('executorGoalsOf', () => {
  it('meets every goal when retryproof needs no more requests and CPU and is as fast', () => {
    // Act
    const goals = executorGoalsOf(measurements(round(), round()));
    // Assess
    expect(goals).toHaveLength(8);
    expect(goals.every((g) => g.met)).toBe(true);
    expect(goals.every((g) => g.missed === undefined)).toBe(true);
  });

  it('misses the request goal by one extra read a batch, and says so with the numbers', () => {
    // Prepare
    const rp = round({ requests: 21, byOperation: { UpdateItemCommand: 20, GetItemCommand: 1 } });
    // Act
    const goals = executorGoalsOf(measurements(rp, round()));
    // Assess
    const requests = goals.filter((g) => g.figure.includes('DynamoDB requests'));
    expect(requests.map((g) => g.met)).toEqual([false, false, false, false]);
    expect(requests[0]).toMatchObject({ retryproof: '2.10', powertools: '2.00', ratio: '1.05x' });
    expect(requests[0]?.missed).toContain('GetItem 0.10');
  });

  it("allows accept-to-effect up to 1.2x the consumer's p50 at rest and 1.5x under a storm, and no more", () => {
    // Prepare: p50 of 6 against 5 is 1.2x; 7 against 5 is 1.4x; 8 against 5 is 1.6x.
    const at = (shift: number): ExecutorRound => round({ latenciesMs: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((v) => v + shift) });
    const metAt = (shift: number): boolean[] =>
      executorGoalsOf(measurements(at(shift), round()))
        .filter((g) => g.figure.includes('accept-to-effect'))
        .map((g) => g.met);
    // Act + Assess: at rest, then the two storms.
    expect(metAt(1)).toEqual([true, true, true]);
    expect(metAt(2)).toEqual([false, true, true]);
    expect(metAt(3)).toEqual([false, false, false]);
    const over = executorGoalsOf(measurements(at(2), round())).find((g) => g.figure.includes('accept-to-effect'));
    expect(over?.missed).toContain('p50 7.0 ms against 5.0 ms');
  });

  it('misses the CPU goal above 1.0x', () => {
    // Act
    const goals = executorGoalsOf(measurements(round({ cpuMicros: 21_000 }), round()));
    // Assess
    const cpu = goals.find((g) => g.figure.includes('CPU'));
    expect(cpu).toMatchObject({ met: false, ratio: '1.05x', retryproof: '2.100 ms', powertools: '2.000 ms' });
  });
});
