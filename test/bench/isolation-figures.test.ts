/**
 * The isolation benchmark's figures and flags (bench/isolation.ts): what it reports of the slow
 * route's starts and drain, and a bad flag refused with its name. The benchmark itself runs the
 * local stack for a minute or more, so it is not part of the suite.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../bench/flags.ts';
import { isolationSettingsOf } from '../../bench/isolation.ts';
import { mostStartsInWindow, shortestGap, slowFiguresOf, verdicts } from '../../bench/isolation/isolation-figures.ts';

describe('the isolation benchmark\'s figures', () => {
  it('counts the most starts in any sliding 1 s window, not in calendar seconds', () => {
    // 0.9 s and 1.1 s fall in different calendar seconds, yet in one sliding window.
    expect(mostStartsInWindow([0, 900, 1100, 3000])).toBe(2);
    expect(mostStartsInWindow([0, 1000, 2000])).toBe(1);
    expect(mostStartsInWindow([])).toBe(0);
  });

  it('finds the shortest gap between consecutive starts, in any order', () => {
    expect(shortestGap([3000, 0, 1800, 1000])).toBe(800);
    expect(shortestGap([5])).toBeUndefined();
  });

  it('reports a drain rate over the runs that completed, and an undrained route as such', () => {
    const figures = slowFiguresOf({ deliveries: 4, starts: [0, 1000, 2000], ends: [2000, 3000], firstAcceptedAt: 0, phaseEndedAt: 10_000 });
    expect(figures).toMatchObject({ started: 3, completed: 2, drained: false, drainSeconds: 10, drainPerSecond: 0.2 });
  });

  it('does not call starts 0.8 s apart at a limit of 1 a second held', () => {
    const alone = { count: 1, p50Ms: 100, p95Ms: 100, maxMs: 100 };
    const slow = slowFiguresOf({ deliveries: 2, starts: [0, 800], ends: [20_000, 20_800], firstAcceptedAt: 0, phaseEndedAt: 21_000 });
    const checks = verdicts(alone, { name: 'B', fastBeside: alone, slow, dlqDepth: 0, entriesPerKey: { min: 1, max: 1, keys: 2 } }, {
      quick: true, deliveries: 2, slowActionSeconds: 20, slowConcurrency: 25, ratePerSecond: 1, peerDrainWatchSeconds: 0,
    });
    expect(checks.filter((c) => !c.held).map((c) => c.what)).toEqual(['slow: at most 1 start(s) in any 1 s (2)', 'slow: starts at least 1.000 s apart (shortest 0.800 s)']);
  });
});

describe('the isolation benchmark\'s flags', () => {
  it('takes --quick as 20 deliveries and a 2 s action, and the defaults otherwise', () => {
    expect(isolationSettingsOf(['--quick'])).toMatchObject({ deliveries: 20, slowActionSeconds: 2, slowConcurrency: 25 });
    expect(isolationSettingsOf([])).toMatchObject({ deliveries: 200, slowActionSeconds: 20, slowConcurrency: 25, peerDrainWatchSeconds: 60 });
    expect(isolationSettingsOf(['--quick', '--action-seconds', '0.5'])).toMatchObject({ slowActionSeconds: 0.5 });
  });

  it('refuses a value out of range or a flag it does not know, naming it', () => {
    expect(() => isolationSettingsOf(['--concurrency', '1'])).toThrow(new UsageError('--concurrency must be a whole number from 2 to 1000, got 1'));
    expect(() => isolationSettingsOf(['--deliveries', '2.5'])).toThrow(UsageError);
    expect(() => isolationSettingsOf(['--slow'])).toThrow(new UsageError('unknown flag --slow'));
  });
});
