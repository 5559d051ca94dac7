/**
 * The simulation's ordering checks (sim-ordering.ts) judge the runs they are given: each rule is
 * shown here to flag the schedule that breaks it and to pass the ones that keep it, so a quiet
 * 2000-seed run means the protocol kept the rules, not that the checker saw nothing.
 */
import { describe, expect, it } from 'vitest';
import type { EntityOrder, LineRef, Turn } from '../../lambdas/ports/entity-order.ts';
import { type AcceptedKey, type ObservedPlace, ObservedPlaces, type OrderedKey, type OrderedRun, checkAcceptedOrder, checkLines } from './sim-ordering.ts';

/** A run of one budget at `place` (generation 0 unless given), between the action calls `from` and `to`. */
function run(place: number, from: number, to: number, options: { generation?: number; budget?: string; attempt?: number } = {}): OrderedRun {
  const at: ObservedPlace = { generation: options.generation ?? 0, place };
  return { attempt: options.attempt ?? 1, place: at, budget: options.budget ?? '0/0', firstCallSeq: from, lastCallSeq: to };
}

function key(name: string, ...runs: OrderedRun[]): OrderedKey {
  return { route: 'pay', key: name, entity: 'cus_1', runs };
}

function judge(keys: OrderedKey[]): { violations: string[]; stats: { linesChecked: number; orderedPairs: number } } {
  const violations: string[] = [];
  const stats = { linesChecked: 0, orderedPairs: 0 };
  checkLines(keys, violations, stats);
  return { violations, stats };
}

describe('the ordering checks of the simulation', () => {
  it('pass runs made one at a time in place order, retries included', () => {
    // Act
    const { violations, stats } = judge([key('k1', run(1, 1, 2), run(1, 3, 4, { attempt: 2 })), key('k2', run(2, 5, 6)), key('k3', run(3, 7, 8))]);
    // Assess
    expect(violations).toEqual([]);
    expect(stats).toEqual({ linesChecked: 1, orderedPairs: 3 });
  });

  it('flag a later place that ran between the retries of an earlier one', () => {
    // Act
    const { violations } = judge([key('k1', run(1, 1, 2), run(1, 5, 6, { attempt: 2 })), key('k2', run(2, 3, 4))]);
    // Assess
    expect(violations).toEqual(['cus_1 on pay: k2 (place 2) ran beside, or between the runs of, k1 (place 1)']);
  });

  it('flag a later place that ran first', () => {
    // Act
    const { violations } = judge([key('k1', run(1, 3, 4)), key('k2', run(2, 1, 2))]);
    // Assess
    expect(violations).toEqual(['cus_1 on pay: k2 (place 2) ran before k1 (place 1)']);
  });

  it('order a line that started again after it expired after the whole of the line before it', () => {
    // Arrange: k2 at place 2 of the first line; k4 at place 1 of the line that followed (seed 67)
    const keys = [key('k2', run(2, 1, 2)), key('k4', run(1, 3, 4, { generation: 1 }))];
    // Act
    const { violations } = judge(keys);
    // Assess
    expect(violations).toEqual([]);
  });

  it('flag a record run at a second place within one budget: the line passed it while it retried', () => {
    // Act
    const { violations } = judge([key('k1', run(1, 1, 2), run(3, 5, 6, { attempt: 2 })), key('k2', run(2, 3, 4))]);
    // Assess
    expect(violations).toEqual(['cus_1 on pay: k1 ran at place 1 and again at place 3 in one budget (run 2): the line passed it while it was still retrying']);
  });

  it('pass a record redriven to the end of its line: a new budget, a new place', () => {
    // Act
    const { violations } = judge([key('k1', run(1, 1, 2), run(3, 5, 6, { budget: '0/1' })), key('k2', run(2, 3, 4))]);
    // Assess
    expect(violations).toEqual([]);
  });

  it('flag a run on an ordered route that started with no turn', () => {
    // Act
    const { violations } = judge([key('k1', { attempt: 1, budget: '0/0', firstCallSeq: 1, lastCallSeq: 2 })]);
    // Assess
    expect(violations).toEqual(['k1: run 1 on an ordered route (cus_1) started with no turn in its line']);
  });
});

describe('the places the simulation observes', () => {
  /** A line whose calls answer what the test scripts, in order. */
  function scripted(answers: { place?: number; turn?: Turn }[]): EntityOrder {
    const next = () => answers.shift() ?? {};
    const unused = (): never => {
      throw new Error('not called by this test');
    };
    return {
      place: () => Promise.resolve(next().place ?? 0),
      placeIfAbsent: () => Promise.resolve(next().place ?? 0),
      turn: () => Promise.resolve(next().turn ?? { kind: 'none' }),
      markWaiting: unused,
      keep: unused,
      advance: unused,
      skip: unused,
      view: unused,
    };
  }
  const ref = (key: string, receivedAt = 1): LineRef => ({ route: 'pay', entity: 'e', key, receivedAt });

  it('count a new generation when another record is given a place the line gave before', async () => {
    // Arrange
    const observed = new ObservedPlaces();
    const order = observed.observe(scripted([{ place: 1 }, { place: 2 }, { turn: { kind: 'turn', place: 2 } }, { place: 1 }, { turn: { kind: 'turn', place: 1 } }]));
    // Act
    await order.place(ref('k1'), 0, 0);
    await order.place(ref('k2'), 0, 0);
    await order.turn(ref('k2'), 0, 0);
    const first = observed.current('pay', 'k2');
    await order.place(ref('k3'), 0, 0);
    await order.turn(ref('k3'), 0, 0);
    // Assess
    expect(first).toEqual({ generation: 0, place: 2 });
    expect(observed.current('pay', 'k3')).toEqual({ generation: 1, place: 1 });
  });

  it('keep the generation when the same record is given its own place again', async () => {
    // Arrange: placeIfAbsent of a duplicate finds the place its ingest took
    const observed = new ObservedPlaces();
    const order = observed.observe(scripted([{ place: 1 }, { place: 2 }, { place: 1 }, { turn: { kind: 'turn', place: 1 } }]));
    // Act
    await order.place(ref('k1'), 0, 0);
    await order.place(ref('k2'), 0, 0);
    await order.placeIfAbsent(ref('k1'), 0, 0);
    await order.turn(ref('k1'), 0, 0);
    // Assess
    expect(observed.current('pay', 'k1')).toEqual({ generation: 0, place: 1 });
  });
});

describe('the acceptance-order check of the simulation', () => {
  /** A record answered at event `answered` (undefined: never), first arriving at `arrived`, with its runs. */
  function accepted(name: string, arrived: number, answered: number | undefined, runs: OrderedRun[], extra: Partial<AcceptedKey> = {}): AcceptedKey {
    return { route: 'pay', key: name, entity: 'cus_1', runs, firstArrivalSeq: arrived, everFailed: false, ...(answered === undefined ? {} : { answeredSeq: answered }), ...extra };
  }
  function judgeAccepted(keys: AcceptedKey[]): string[] {
    const violations: string[] = [];
    checkAcceptedOrder(keys, violations);
    return violations;
  }

  it('flags a record that ran before one answered 2xx before it first arrived: a lost place (issue 43, a pause past the places\' life)', () => {
    // Arrange: k0 answered at event 2; k4 arrived at event 3, and ran first at a place of its own.
    const keys = [accepted('k0', 1, 2, [run(3, 10, 11)]), accepted('k4', 3, 4, [run(2, 5, 6)])];
    // Act, Assess
    expect(judgeAccepted(keys)).toEqual(['cus_1 on pay: k4 ran before k0, which was answered 2xx before k4 first arrived: the line lost its accepted order']);
  });

  it('passes copies that raced (the later one arrived before the first was answered), a FAILED first one, and one whose place failed at ingest', () => {
    const raced = [accepted('k0', 1, 3, [run(2, 10, 11)]), accepted('k1', 2, 4, [run(1, 5, 6)])];
    const failed = [accepted('k0', 1, 2, [run(3, 10, 11)], { everFailed: true }), accepted('k4', 3, 4, [run(2, 5, 6)])];
    const unplaced = [accepted('k0', 1, 2, [run(3, 10, 11)], { placeFailed: true }), accepted('k4', 3, 4, [run(2, 5, 6)])];
    const inOrder = [accepted('k0', 1, 2, [run(1, 5, 6)]), accepted('k4', 3, 4, [run(2, 10, 11)])];
    expect([raced, failed, unplaced, inOrder].map(judgeAccepted)).toEqual([[], [], [], []]);
  });
});
