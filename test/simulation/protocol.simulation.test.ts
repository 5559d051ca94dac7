import { inject } from 'vitest';
import { describe, expect, it } from 'vitest';
import { formatSchedule, simulate } from './run-simulation.ts';

/**
 * Seeds per `npm test`: a fixed, smaller number than `npm run simulate -- --runs 2000`. Since
 * protocol v3 a seed may span weeks of simulated time (TTL lag, DLQ retention, replays at any
 * age), about 3 s a seed on a quiet 2-core machine and 10 s on a loaded one: 12 seeds, and a
 * timeout sized for the loaded case.
 */
const RUNS = 12;
/**
 * Seeds that break at twice the clock bound (`npm run simulate -- --seed S --regions 2 --skew-factor 2`),
 * picked with every feature the seeds draw today except a rate limit for the pay route: they run
 * without one (noRateLimit). A feature drawn later must leave a seed that does not draw it as it
 * was, or these are picked again (2011 and 2206 until the S3 claim check; 2004 until the executor
 * cached route states, which changed every seed's interleaving; a scan of 2000-2039 and 2100-2123
 * then found 2105).
 */
const SKEW_SEEDS = [2105];
/** Seeds of the eventually consistent control: enough that two Regions meet on one key. */
const CONTROL_RUNS = 4;
const TIMEOUT_MS = 600_000;

describe('the execution protocol under simulated faults', () => {
  it(`keeps every invariant over ${RUNS} seeded schedules of deliveries, crashes, clock jumps, skewed clocks, pauses, redrives and reconciler runs`, async () => {
    // Act
    const summary = await simulate({ env: { endpoint: inject('dynamoEndpoint') }, firstSeed: 1, runs: RUNS, shrinkBudgetMs: 20_000 });
    // Assess: a failure names its seed and its shrunk schedule, for `npm run simulate -- --seed S`.
    const report = summary.failures
      .map((f) => `seed ${f.seed}: ${f.shrunkViolations.join('; ')}\n${formatSchedule(f.shrunk)}`)
      .join('\n');
    expect(report).toBe('');
    expect(summary.runs).toBe(RUNS);
    // The faults were really injected, not skipped.
    expect(summary.totals.crashes).toBeGreaterThan(0);
    expect(summary.totals.reconcilerRuns).toBeGreaterThan(RUNS);
    expect(summary.totals.redrives).toBeGreaterThan(0);
    expect(summary.totals.maxClockSkewMs).toBeGreaterThan(0);
    expect(summary.totals.ambiguousWrites).toBeGreaterThan(0);
    expect(summary.totals.slowAnswers).toBeGreaterThan(0);
    expect(summary.totals.sqsDuplicates).toBeGreaterThan(0);
    // Some seeds run two Regions on one table, with copies of a key in both.
    expect(summary.totals.multiRegionRuns).toBeGreaterThan(0);
    expect(summary.totals.multiRegionRuns).toBeLessThan(RUNS);
    expect(summary.totals.crossRegionCopies).toBeGreaterThan(0);
    expect(summary.totals.doubleClaims).toBe(0);
    // Some seeds rate-limit a route, some of those on a queue of its own, and work waited for it.
    expect(summary.totals.rateLimitedRuns).toBeGreaterThan(0);
    expect(summary.totals.ownQueueRuns).toBeGreaterThan(0);
    expect(summary.totals.rateDeferrals).toBeGreaterThan(0);
    // Large bodies went through the bucket and were read back by the workers that ran them.
    expect(summary.totals.bodyObjectsStored).toBeGreaterThan(0);
    expect(summary.totals.bodyReads).toBeGreaterThan(0);
    // Some seeds order the pay route per customer, and lines formed: records waited for their turn.
    expect(summary.totals.orderedRuns).toBeGreaterThan(0);
    expect(summary.totals.orderedPairs).toBeGreaterThan(0);
    expect(summary.totals.waitingTurns).toBeGreaterThan(0);
  }, TIMEOUT_MS);

  it('holds at the clock bound and breaks at twice it: two runs of one key at once once clocks are off by more than the margins allow', async () => {
    // Arrange: seeds whose takeover edges (the clock at a lease's end, a second worker polling)
    // meet a holder whose clock runs behind and a newcomer whose clock runs ahead.
    const run = (seed: number, skewFactor: number) =>
      simulate({ env: { endpoint: inject('dynamoEndpoint') }, firstSeed: seed, runs: 1, regions: 2, skewFactor, shrinkBudgetMs: 0, noRateLimit: true });
    // Act
    const within = await Promise.all(SKEW_SEEDS.map((seed) => run(seed, 1)));
    const twice = await Promise.all(SKEW_SEEDS.map((seed) => run(seed, 2)));
    // Assess
    expect(within.flatMap((s) => s.failures)).toEqual([]);
    const broken = twice.flatMap((s) => s.failures.flatMap((f) => f.violations));
    expect(broken.some((v) => v.includes('overlap'))).toBe(true);
  }, TIMEOUT_MS);

  it('finds double claims and broken invariants in the eventually consistent control (MREC: a table per Region, last writer wins), the evidence for refusing it at synth', async () => {
    // Act: the same protocol, two Regions, each on its own replica that learns the other's writes late.
    const summary = await simulate({
      env: { endpoint: inject('dynamoEndpoint') },
      firstSeed: 1,
      runs: CONTROL_RUNS,
      regions: 2,
      consistency: 'eventual',
      stopAtFirstFailure: false,
      shrinkBudgetMs: 0,
    });
    // Assess: both Regions claimed one key, and some invariant broke.
    expect(summary.totals.replicatedWrites).toBeGreaterThan(0);
    expect(summary.totals.doubleClaims).toBeGreaterThan(0);
    expect(summary.failures.length).toBeGreaterThan(0);
  }, TIMEOUT_MS);
});
