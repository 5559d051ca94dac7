/** The storm's verdict can fail: each check is shown to catch what it is about. */
import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../lambdas/domain/event-record.ts';
import { DEFAULT_MIX, parseLadder, planStorm, quantile } from '../../cli/storm/storm-plan.ts';
import type { EventPlan } from '../../cli/storm/storm-plan.ts';
import { buildReport, formatSummary } from '../../cli/storm/storm-report.ts';
import type { ReportInput, Verification } from '../../cli/storm/storm-report.ts';
import type { EventOutcome, RequestRecord } from '../../cli/storm/storm-sender.ts';

const plan = (index: number, over: Partial<EventPlan> = {}): EventPlan => ({
  index,
  amount: 100,
  simulate: undefined,
  copies: 1,
  lostAcks: [false],
  mismatch: false,
  badSignature: false,
  stale: false,
  behaviours: [],
  expect: 'completed',
  ...over,
});
const record = (key: string, status: EventRecord['status'], lastError?: string): EventRecord => ({
  route: 'demo',
  key,
  status,
  fingerprint: 'f',
  body: '{}',
  bodyEncoding: 'utf8',
  headers: {},
  receivedAt: 1,
  expiresAt: 2,
  answer: { status: 202, body: '' },
  hits: 1,
  attempts: 1,
  runs: 1,
  redrives: 0,
  ...(lastError === undefined ? {} : { lastError }),
});

function input(over: { verification?: Partial<Verification>; requests?: RequestRecord[]; events?: EventOutcome[] } = {}): ReportInput {
  const events: EventOutcome[] = over.events ?? [
    { index: 0, key: 'a', plan: plan(0), accepted: true, acknowledged: true, attempts: 1 },
    { index: 1, key: 'b', plan: plan(1, { expect: 'dead-lettered' }), accepted: true, acknowledged: true, attempts: 1 },
  ];
  const requests: RequestRecord[] = over.requests ?? [
    { event: 0, kind: 'genuine', attempt: 0, status: 202, replayed: false, ms: 3 },
    { event: 0, kind: 'genuine', attempt: 0, status: 202, replayed: true, ms: 5 },
    { event: 1, kind: 'genuine', attempt: 0, status: 202, replayed: false, ms: 4 },
    { event: 1, kind: 'bad-signature', attempt: 0, status: 401, replayed: false, ms: 1 },
  ];
  return {
    startedAt: 0,
    endedAt: 1000,
    url: 'http://127.0.0.1:1',
    route: 'demo',
    settings: {},
    requests,
    events,
    verification: {
      records: new Map([
        ['a', record('a', 'COMPLETED')],
        ['b', record('b', 'FAILED', 'RetryableActionError: x')],
      ]),
      effectsAfter: new Map([['a', { posted: 1, reversed: 0 }]]),
      deadLetters: new Map([['b', 'retries exhausted after 3 attempts']]),
      settle: { settled: true, waitedMs: 10, queued: 0, executing: 0 },
      ...over.verification,
    },
    reconciliation: { ran: true, rounds: 1, reversed: 0, reenqueued: 0, needsAttention: 1 },
    executorRestart: 'off',
    breaker: { checked: true, pausedBefore: false, trippedDuringStorm: false, reenqueuedOnResume: 0 },
    phasesMs: { sending: 900, settling: 10 },
  };
}

describe('the storm verdict', () => {
  it('passes when every key completed once or was dead-lettered with its reason', () => {
    const report = buildReport(input());
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report).toMatchObject({ pass: true, accepted: 2, replayed: 1, lost: 0, doubleEffects: { keysLeft: 0 } });
    expect(report.deadLettered).toEqual({ planned: 1, accountedFor: 1, unplanned: 0 });
    expect(formatSummary(report)).toContain('storm: PASS');
  });

  it('fails on a double effect left after reconciliation', () => {
    const report = buildReport(input({ verification: { effectsAfter: new Map([['a', { posted: 2, reversed: 0 }]]) } }));
    expect(report.pass).toBe(false);
    expect(report.doubleEffects).toMatchObject({ keysLeft: 1, keys: ['a'] });
    expect(report.checks.find((c) => c.name === 'no double effect after reconciliation')?.ok).toBe(false);
  });

  it('counts a second effect that reconciliation reversed from the ledger as it ends, whenever it was made', () => {
    // Prepare: key a got two more effects (three in all), and two were reversed.
    const report = buildReport(input({ verification: { effectsAfter: new Map([['a', { posted: 1, reversed: 2 }]]) } }));
    // Assess: one key, two reversed entries, none left; the summary says the same figures.
    expect(report.doubleEffects).toMatchObject({ keysWithSecondEffect: 1, reversedEntries: 2, keysLeft: 0 });
    expect(report.pass).toBe(true);
    const summary = formatSummary(report);
    expect(summary).toContain('1 key got a second effect (a worker died after the effect); reconciliation reversed 2 of their entries; 0 keys still hold more than one');
    expect(summary).toContain('PASS  no double effect after reconciliation: 0 of 2 keys hold more than one posted entry; 1 got a second effect and reconciliation reversed 2 entries');
  });

  it('names the reconciler\'s own counts as its whole window, apart from the storm\'s keys', () => {
    const report = buildReport({ ...input(), reconciliation: { ran: true, rounds: 2, reversed: 7, reenqueued: 0, needsAttention: 1 } });
    const summary = formatSummary(report);
    expect(summary).toContain('2 runs over its whole window (every route, 24 h): reversed 7 entries');
    expect(summary).toContain('0 keys got a second effect');
  });

  it('reports the settle wait as one figure, the same in the check and in the time line', () => {
    // Prepare: two waits, 45.5 s in all (the phase time sums the same waits).
    const report = buildReport({
      ...input({ verification: { settle: { settled: true, waitedMs: 45_500, queued: 0, executing: 0 }, settleWaits: 2 } }),
      phasesMs: { sending: 900, settling: 45_500 },
    });
    const summary = formatSummary(report);
    expect(summary).toContain('PASS  the work settled: queue empty and no live lease, after 45.5 s of waiting (2 waits)');
    expect(summary).toMatch(/time .*settling 45\.5 s/);
  });

  it('prints one PASS or FAIL line per check and a verdict that counts them', () => {
    const report = buildReport(input({ verification: { effectsAfter: new Map([['a', { posted: 2, reversed: 0 }]]) } }));
    const lines = formatSummary(report).split('\n');
    expect(lines.filter((l) => /^ {2}(PASS|FAIL) {2}/.test(l))).toHaveLength(report.checks.length);
    expect(lines).toContain('  FAIL  no double effect after reconciliation: 1 of 2 keys hold more than one posted entry; 1 got a second effect and reconciliation reversed 0 entries');
    expect(lines.at(-1)).toBe(`storm: FAIL (${report.checks.length - 1} of ${report.checks.length} checks passed)`);
  });

  it('fails on an accepted key that is neither completed nor dead-lettered with a reason', () => {
    const report = buildReport(
      input({
        verification: {
          records: new Map([
            ['a', record('a', 'RECEIVED')],
            ['b', record('b', 'FAILED', 'x')],
          ]),
          deadLetters: new Map(),
        },
      }),
    );
    expect(report.lost).toBe(2);
    expect(report.lostKeys.map((l) => [l.key, l.status])).toEqual([
      ['a', 'RECEIVED'],
      ['b', 'FAILED'],
    ]);
    expect(report.pass).toBe(false);
  });

  it('fails when a refusal has another status than the expected one, or a genuine copy is refused', () => {
    const report = buildReport(
      input({
        requests: [
          { event: 0, kind: 'genuine', attempt: 0, status: 202, replayed: false, ms: 3 },
          { event: 1, kind: 'genuine', attempt: 0, status: 400, replayed: false, ms: 3 },
          { event: 1, kind: 'genuine', attempt: 1, status: 202, replayed: false, ms: 3 },
          { event: 1, kind: 'mismatched-payload', attempt: 0, status: 202, replayed: true, ms: 1 },
        ],
      }),
    );
    const failed = report.checks.filter((c) => !c.ok).map((c) => c.name);
    expect(failed).toEqual(['no genuine delivery was refused', 'every mismatched-payload copy got 422']);
  });

  it('flags parked work as not planned, so a paused route cannot pass the storm quietly', () => {
    const report = buildReport(input({ verification: { records: new Map([['a', record('a', 'PARKED')], ['b', record('b', 'FAILED', 'x')]]) } }));
    expect(report.lost).toBe(0);
    expect(report.checks.find((c) => c.name === 'every event ended as planned')?.ok).toBe(false);
  });

  it('checks only what the sender saw when the tables are out of reach', () => {
    const report = buildReport({ ...input(), verification: undefined });
    expect(report.lost).toBeNull();
    expect(report.checks.find((c) => c.name === 'nothing accepted is lost')).toMatchObject({ ok: false, detail: expect.stringContaining('not checked') as unknown });
  });
});

describe('the storm plan', () => {
  it('is the same for the same seed, and mixes every behaviour near its share', () => {
    const a = planStorm(2000, DEFAULT_MIX, 4, 450, 7);
    expect(planStorm(2000, DEFAULT_MIX, 4, 450, 7)).toEqual(a);
    const share = (b: string) => a.filter((p) => p.behaviours.includes(b)).length / a.length;
    expect(share('crash-after-effect')).toBeCloseTo(DEFAULT_MIX.crash, 1);
    expect(share('injected-failure')).toBeCloseTo(DEFAULT_MIX.fail, 1);
    expect(share('lost-ack')).toBeCloseTo(DEFAULT_MIX.lostAck, 1);
    expect(a.filter((p) => p.expect === 'dead-lettered').every((p) => p.simulate?.failAttempts === 999)).toBe(true);
    expect(a.every((p) => p.copies >= 1 && p.copies <= DEFAULT_MIX.maxConcurrentCopies && p.lostAcks.length === 5)).toBe(true);
  });

  it('reads a ladder and takes quantiles', () => {
    expect(parseLadder('1s,5s,30s,5m')).toEqual([1000, 5000, 30_000, 300_000]);
    expect(parseLadder('1s,soon')).toBeUndefined();
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(quantile([1, 2, 3, 4], 0.99)).toBe(4);
  });
});
