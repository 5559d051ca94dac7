import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { costInputsOf, costTable } from '../../bench/cost.ts';
import {
  committedLogFigures,
  COST_COMMAND_DEFAULTS,
  DEFAULT_INPUTS,
  deferredRecordBytes,
  failedRecordBytes,
  IDLE_POLLS_PER_QUEUE_MONTH,
  PRICES,
  priceMonth,
  retryproofReadUnits,
  tiered,
  tracesRecorded,
} from '../../bench/cost-model.ts';
import { UsageError } from '../../bench/flags.ts';
import { logBytesPerDelivery } from '../../bench/log-figures.ts';
import { DEFAULT_TTL_SECONDS } from '../../lambdas/config/route-config.ts';
import { bodyObjectLifeDays } from '../../lambdas/domain/body-object.ts';

const run = promisify(execFile);
const AT_10M = { ...DEFAULT_INPUTS, deliveriesPerMonth: 10_000_000, duplicateShare: 0.05 };

describe('the cost model', () => {
  it('prices the failed index of retryproof redrive per failure only: nothing without failures, and in step with their share', () => {
    const line = (failureShare: number) => priceMonth({ ...AT_10M, failureShare }).lines.find((l) => l.item === 'DynamoDB failed index');
    expect(line(0)?.retryproof).toBe(0);
    const at1 = line(0.001)?.retryproof ?? 0;
    const at2 = line(0.002)?.retryproof ?? 0;
    expect(at1).toBeGreaterThan(0);
    expect(at2).toBeCloseTo(2 * at1, 10);
    // An ALL copy of a FAILED record keeps its payload: larger than the body, and each entry and exit is paid by the KB.
    expect(failedRecordBytes(2048)).toBeGreaterThan(2048);
    const failures = 10_000_000 * 0.95 * 0.001;
    expect(at1).toBeGreaterThanOrEqual(failures * 2 * Math.ceil(failedRecordBytes(2048) / 1024) * PRICES.dynamoWriteUnit.usd);
    expect(line(0.001)?.powertools).toBe(0);
  });

  it('prices API Gateway by its tiers', () => {
    expect(tiered(PRICES.httpApiRequests, 1e6)).toBeCloseTo(1.0, 6);
    expect(tiered(PRICES.restApiRequests, 1e6)).toBeCloseTo(3.5, 6);
    // 300 M at $1.00, then 100 M at $0.90.
    expect(tiered(PRICES.httpApiRequests, 400e6)).toBeCloseTo(300 + 90, 6);
  });

  it('counts write units from the request counts: 2 per new delivery for Powertools, 1 per duplicate', () => {
    // Prepare
    const inputs = { ...DEFAULT_INPUTS, deliveriesPerMonth: 1_000_000, duplicateShare: 0.25 };
    // Act
    const report = priceMonth(inputs);
    // Assess: the receiver's 2 writes and the consumer's 2 per new delivery, 1 per duplicate, all on a record under 1 KB.
    expect(report.itemBytes.powertoolsRecord).toBeLessThan(1024);
    expect(report.usage.dynamoWriteUnits?.powertools).toBeCloseTo(750_000 * 4 + 250_000, 0);
    expect(report.lines.find((l) => l.item === 'API Gateway')).toMatchObject({ retryproof: 1.0, powertools: 3.5 });
    expect(report.totals.retryproof).toBeCloseTo(report.lines.reduce((s, l) => s + l.retryproof, 0), 9);
    expect(costTable(report)).toContain('total a month');
  });

  it('prices the reconciler\'s reads: every hourly run reads the whole 24 h window again, so each record\'s index copy is read 24 times', () => {
    // Prepare
    const reads = retryproofReadUnits(2048);
    const inputs = { ...DEFAULT_INPUTS, deliveriesPerMonth: 1_000_000, duplicateShare: 0 };
    // Act
    const report = priceMonth(inputs);
    // Assess: 24 reads of a copy under 4 KB, half a unit per 4 KB each (eventually consistent), plus the fixed Queries and the route-state reads.
    expect(reads.windowReadsPerDelivery).toBe(24);
    expect(reads.windowReadUnitsPerRecordRead).toBeLessThan(0.5);
    const expected =
      1_000_000 * 24 * reads.windowReadUnitsPerRecordRead + (1_000_000 / inputs.batchFill) * 1 + reads.runsPerMonth * reads.fixedUnitsPerRun;
    expect(report.usage.dynamoReadUnits?.retryproof).toBeCloseTo(expected, 3);
    expect(report.lines.find((l) => l.item === 'DynamoDB reads')?.retryproof).toBeCloseTo(expected * PRICES.dynamoReadUnit.usd, 9);
  });

  it('prints the ratio to the REST API + Powertools pipeline', () => {
    const report = priceMonth({ ...DEFAULT_INPUTS, deliveriesPerMonth: 10_000_000, duplicateShare: 0.05 });
    const ratio = (report.totals.retryproof / report.totals.powertools).toFixed(2);
    expect(costTable(report)).toContain(`retryproof costs ${ratio}x the REST API + Powertools pipeline`);
  });

  it('refuses bad flags with a message that names the flag', () => {
    expect(() => costInputsOf(['--duplicate-share', '0.1'])).toThrow(new UsageError('--deliveries-per-month is required'));
    expect(() => costInputsOf(['--deliveries-per-month', 'many', '--duplicate-share', '0.1'])).toThrow(/--deliveries-per-month must be a number/);
    expect(() => costInputsOf(['--deliveries-per-month', '10', '--duplicate-share', '30'])).toThrow(/not a percentage/);
    expect(() => costInputsOf(['--deliveries-per-month', '10', '--duplicate-share', '0.1', '--colour'])).toThrow(/unknown flag --colour/);
    expect(costInputsOf(['--deliveries-per-month=1_000', '--duplicate-share', '0', '--json'])).toMatchObject({
      inputs: { deliveriesPerMonth: 1000, duplicateShare: 0 },
      json: true,
    });
  });

  it('adds what a deployed receiver pays to be watched to the whole bill, and keeps the requests apart', () => {
    // Act
    const report = priceMonth(AT_10M);
    // Assess: the observability lines are in the totals, and nothing else is.
    const watched = report.lines.filter((l) => l.observability);
    expect(watched.map((l) => l.item)).toEqual([
      'CloudWatch Logs ingestion',
      'CloudWatch Logs storage',
      'CloudWatch custom metrics',
      'CloudWatch alarms',
      'CloudWatch alarms, route queues',
      'CloudWatch dashboard',
      'X-Ray traces',
      'KMS',
      'Secrets Manager',
      'EventBridge Scheduler',
    ]);
    const sum = (key: 'retryproof' | 'powertoolsHttp') => watched.reduce((s, l) => s + l[key], 0);
    expect(report.observability.retryproof).toBeCloseTo(sum('retryproof'), 9);
    expect(report.totals.retryproof).toBeCloseTo(report.core.retryproof + report.observability.retryproof, 9);
    expect(report.totals.powertoolsHttp).toBeCloseTo(report.core.powertoolsHttp + sum('powertoolsHttp'), 9);
    expect(report.observability.retryproofShare).toBeCloseTo(report.observability.retryproof / report.totals.retryproof, 9);
    // Logs are priced from the measured bytes per delivery: every line kind of every function, the access log too.
    const bytes = logBytesPerDelivery(committedLogFigures().current, { deliveriesPerMonth: 10_000_000, duplicateShare: 0.05, batchFill: 5, reconcilerRunsPerMonth: 24 * 30.4375 });
    expect(watched[0]?.retryproof).toBeCloseTo(((bytes.total * 10_000_000) / 1e9) * PRICES.logsIngestion.usd, 6);
    // Alarms, the dashboard and the key come from the synthesized template, not from a guess.
    expect(watched.find((l) => l.item === 'CloudWatch alarms')?.retryproof).toBeCloseTo(report.stack.alarmMetrics * 0.1, 9);
    expect(report.stack.alarms).toBeGreaterThanOrEqual(10);
  });

  it('gives each peer what a team operating it pays, no less and no more: Lambda\'s lines, one Powertools line per invocation, the access log, and 5 alarm metrics', () => {
    const report = priceMonth(AT_10M);
    const peerLine = (item: string) => report.lines.find((l) => l.item === item);
    for (const item of ['CloudWatch custom metrics', 'CloudWatch alarms, route queues', 'CloudWatch dashboard', 'X-Ray traces', 'KMS', 'Secrets Manager', 'EventBridge Scheduler']) {
      expect(peerLine(item)).toMatchObject({ powertools: 0, powertoolsHttp: 0 });
    }
    expect(peerLine('CloudWatch alarms')).toMatchObject({ powertools: 0.5, powertoolsHttp: 0.5 });
    const figures = committedLogFigures();
    // Lambda's lines untraced (no peer runs X-Ray): today's START, END and REPORT, with no XRAY line.
    const { start, end, report: reportLine } = figures.current.platform;
    expect(reportLine.sample).not.toContain('XRAY');
    const platform = start.bytes + end.bytes + reportLine.bytes;
    const perDelivery =
      platform + figures.beforeCut.functions.ingestNew.powertools.bytes + (0.95 * (platform + figures.beforeCut.functions.executorMessage.powertools.bytes)) / 5 + figures.current.accessLog.bytes;
    expect(report.peerLogBytesPerDelivery.total).toBeCloseTo(perDelivery, 6);
    // The two peers differ in the API alone.
    const differing = report.lines.filter((l) => l.powertools !== l.powertoolsHttp).map((l) => l.item);
    expect(differing).toEqual(['API Gateway']);
  });

  it('counts X-Ray traces under the default sampling rule: the first request of each second, then 5% of the rest', () => {
    const seconds = 30.4375 * 86_400;
    expect(tracesRecorded(1_000_000)).toBe(1_000_000);
    expect(tracesRecorded(10_000_000)).toBeCloseTo(seconds + 0.05 * (10_000_000 - seconds), 3);
  });

  it('states the bill before and after the log cut, the ratio to HTTP API + Powertools against its goal of 1.0x, and the observability share', () => {
    const report = priceMonth(AT_10M);
    const table = costTable(report);
    const dollars = (v: number) => `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
    expect(report.logCut.before.bill).toBeGreaterThan(report.logCut.after.bill);
    expect(table).toContain(`the bill ${dollars(report.logCut.before.bill)} before, ${dollars(report.logCut.after.bill)} after`);
    expect(table).toContain(`retryproof costs ${(report.ratios.toPowertoolsHttp ?? 0).toFixed(2)}x the HTTP API + Powertools pipeline, both operated`);
    expect(table).toContain('goal: at most 1.0x');
    expect(table).toContain(`Observability is ${(report.observability.retryproofShare * 100).toFixed(0)}% of retryproof's bill`);
    expect(table).toContain('ingest powertools');
    expect(table).toContain('Svix');
  });

  it('keeps totals.retryproof and totals.powertools in --json and adds totals.powertoolsHttp and observability.retryproof, in dollars a month', async () => {
    // Act: the command as a user runs it.
    const script = fileURLToPath(new URL('../../bench/cost.ts', import.meta.url));
    const { stdout } = await run(process.execPath, [script, '--deliveries-per-month', '10000000', '--duplicate-share', '0.05', '--json']);
    const json = JSON.parse(stdout) as {
      totals: { retryproof: number; powertools: number; powertoolsHttp: number };
      observability: { retryproof: number };
      isolation: { queues: number; gate: { admissions: number } };
    };
    // Assess: the command prices one isolated, rate-limited route unless told otherwise.
    const report = priceMonth({ ...AT_10M, ...COST_COMMAND_DEFAULTS });
    expect(json.totals.retryproof).toBeCloseTo(report.totals.retryproof, 6);
    expect(json.totals.powertools).toBeCloseTo(report.totals.powertools, 6);
    expect(json.totals.powertoolsHttp).toBeCloseTo(report.totals.powertoolsHttp, 6);
    expect(json.observability.retryproof).toBeCloseTo(report.observability.retryproof, 6);
    expect(json.totals.powertoolsHttp).toBeLessThan(json.totals.powertools);
    expect(json.isolation.queues).toBe(1);
    expect(json.isolation.gate.admissions).toBeCloseTo(10_000_000 * 0.95 * 0.01, 6);
  });
});

describe('the cost model of per-route isolation (issue 23)', () => {
  const ISOLATION_LINES = ['SQS route queues', 'Rate gate', 'CloudWatch alarms, route queues'] as const;
  const linesOf = (inputs: Partial<typeof AT_10M>) => {
    const report = priceMonth({ ...AT_10M, ...inputs });
    return Object.fromEntries(ISOLATION_LINES.map((item) => [item, report.lines.find((l) => l.item === item)]));
  };

  it('prices nothing without isolated routes or deliveries on a rate-limited route, and changes no other line', () => {
    const none = linesOf({});
    for (const item of ISOLATION_LINES) expect(none[item], item).toMatchObject({ retryproof: 0, powertools: 0, powertoolsHttp: 0 });
    const without = priceMonth(AT_10M);
    // The command's large bodies left out: this is isolation alone.
    const withOne = priceMonth({ ...AT_10M, ...COST_COMMAND_DEFAULTS, largeBodyShare: 0 });
    const others = (r: typeof without) => r.lines.filter((l) => !(ISOLATION_LINES as readonly string[]).includes(l.item)).map((l) => [l.item, l.retryproof, l.powertools]);
    expect(others(withOne)).toEqual(others(without));
    expect(withOne.totals.powertools).toBe(without.totals.powertools);
  });

  it('prices each route queue\'s polling all month: 5 pollers with maximum concurrency set, 3 long polls of 20 s a minute each, in step with the queues', () => {
    expect(IDLE_POLLS_PER_QUEUE_MONTH).toBe(5 * 3 * 60 * 24 * 30.4375);
    const one = linesOf({ isolatedRoutes: 1 })['SQS route queues']!.retryproof;
    expect(one).toBeCloseTo(IDLE_POLLS_PER_QUEUE_MONTH * PRICES.sqsRequests.usd, 9);
    expect(one).toBeCloseTo(0.263, 3);
    expect(linesOf({ isolatedRoutes: 3 })['SQS route queues']!.retryproof).toBeCloseTo(3 * one, 9);
  });

  it('prices the route queues\' alarms: 1 metric for each oldest-message alarm, 3 for each rate-limited route\'s backlog alarm', () => {
    expect(linesOf({ isolatedRoutes: 2, rateLimitedRoutes: 0 })['CloudWatch alarms, route queues']!.retryproof).toBeCloseTo(2 * 0.1, 9);
    expect(linesOf({ isolatedRoutes: 2, rateLimitedRoutes: 1 })['CloudWatch alarms, route queues']!.retryproof).toBeCloseTo(5 * 0.1, 9);
    expect(linesOf({ isolatedRoutes: 2, rateLimitedRoutes: 1 })['CloudWatch alarms, route queues']!.observability).toBe(true);
  });

  it('prices the rate gate: a write unit per run under its limit, two on a busy gate, and per refusal the failed gate write, the reservation, the record\'s defer and a delayed send, in step with the share and the deferrals', () => {
    // Prepare: 1% of the 9.5 M new deliveries on a rate-limited route.
    const runs = 10_000_000 * 0.95 * 0.01;
    const report = (rateLimitedShare: number, deferralsPerRun: number) => priceMonth({ ...AT_10M, isolatedRoutes: 1, rateLimitedRoutes: 1, rateLimitedShare, deferralsPerRun });
    // Act
    const under = report(0.01, 0);
    const once = report(0.01, 1);
    // Assess: under its limit a run pays its admission only.
    expect(under.isolation.gate.writeUnits).toBeCloseTo(runs, 6);
    // ... and its lead's wait in its invocation (100 ms of GB-seconds), a little more than the write.
    const underUsd = under.lines.find((l) => l.item === 'Rate gate')!.retryproof;
    expect(underUsd).toBeGreaterThan(runs * PRICES.dynamoWriteUnit.usd);
    expect(underUsd).toBeLessThan(runs * PRICES.dynamoWriteUnit.usd * 3);
    // The record without its body is under 1 KB: its defer is 1 unit, so a refusal writes 3, and
    // a run on a busy gate 2 (the idle form failing, the busy form taking its slot).
    expect(deferredRecordBytes(2048)).toBeLessThan(1024);
    expect(once.isolation.gate).toMatchObject({ admissions: runs, refusals: runs, deferUnits: 1, delayedSends: runs });
    expect(once.isolation.gate.writeUnits).toBeCloseTo(runs * 5, 6);
    // A run on a busy gate waits for its slot in its invocation: more GB-seconds than under the limit.
    expect(once.isolation.gate.executorGbSeconds).toBeGreaterThan(under.isolation.gate.executorGbSeconds);
    const refusal = (once.isolation.gate.usd - under.isolation.gate.usd) / runs;
    expect(refusal).toBeGreaterThan(4 * PRICES.dynamoWriteUnit.usd + PRICES.sqsRequests.usd);
    const gate = (share: number, deferrals: number) => report(share, deferrals).lines.find((l) => l.item === 'Rate gate')!.retryproof;
    expect(gate(0.02, 1)).toBeCloseTo(2 * gate(0.01, 1), 9);
    expect(gate(0.01, 3) - gate(0.01, 2)).toBeCloseTo(gate(0.01, 2) - gate(0.01, 1), 9);
    expect(gate(0, 1)).toBe(0);
  });

  it('npm run cost prices one isolated, rate-limited route by default, none with --isolated-routes 0, and refuses flags that contradict', () => {
    const base = ['--deliveries-per-month', '10000000', '--duplicate-share', '0.05'];
    expect(costInputsOf(base).inputs).toMatchObject({ isolatedRoutes: 1, rateLimitedRoutes: 1, rateLimitedShare: 0.01, deferralsPerRun: 1 });
    expect(costInputsOf([...base, '--isolated-routes', '0']).inputs).toMatchObject({ isolatedRoutes: 0, rateLimitedRoutes: 0, rateLimitedShare: 0 });
    expect(costInputsOf([...base, '--isolated-routes', '3', '--rate-limited-share', '0.2', '--deferrals-per-run', '0']).inputs).toMatchObject({
      isolatedRoutes: 3,
      rateLimitedRoutes: 1,
      rateLimitedShare: 0.2,
      deferralsPerRun: 0,
    });
    expect(() => costInputsOf([...base, '--isolated-routes', '1', '--rate-limited-routes', '2'])).toThrow(/--rate-limited-routes must be at most --isolated-routes/);
    expect(() => costInputsOf([...base, '--isolated-routes', '0', '--rate-limited-share', '0.1'])).toThrow(/needs a rate-limited route/);
    expect(() => costInputsOf([...base, '--isolated-routes', '1.5'])).toThrow(/whole number/);
    const table = costTable(priceMonth(costInputsOf(base).inputs));
    for (const item of ['SQS route queues', 'Rate gate', '* CloudWatch alarms, route queues']) expect(table).toContain(item);
  });
});

describe('the cost model of the S3 claim check (issue 24)', () => {
  const CLAIM_CHECK_LINES = ['S3 claim check requests', 'S3 claim check storage'] as const;
  const AT_2_PERCENT = { ...AT_10M, largeBodyShare: 0.02, largeBodyMib: 1 };
  const lineOf = (report: ReturnType<typeof priceMonth>, item: (typeof CLAIM_CHECK_LINES)[number]) => report.lines.find((l) => l.item === item)!;

  it('costs nothing at 0% large bodies, and at 2% adds its two lines to the whole bill and changes no other line', () => {
    // Act
    const none = priceMonth({ ...AT_2_PERCENT, largeBodyShare: 0 });
    const some = priceMonth(AT_2_PERCENT);
    // Assess
    for (const item of CLAIM_CHECK_LINES) expect(lineOf(none, item), item).toMatchObject({ retryproof: 0, powertools: 0, powertoolsHttp: 0 });
    expect(none.claimCheck.usd.total).toBe(0);
    const others = (r: typeof none) => r.lines.filter((l) => !(CLAIM_CHECK_LINES as readonly string[]).includes(l.item)).map((l) => [l.item, l.retryproof, l.powertools]);
    expect(others(some)).toEqual(others(none));
    const added = lineOf(some, 'S3 claim check requests').retryproof + lineOf(some, 'S3 claim check storage').retryproof;
    expect(added).toBeCloseTo(some.claimCheck.usd.total, 9);
    expect(some.totals.retryproof - none.totals.retryproof).toBeCloseTo(added, 9);
    expect(some.core.retryproof - none.core.retryproof).toBeCloseTo(added, 9);
    expect(some.totals.powertools).toBe(none.totals.powertools);
    expect(some.totals.powertoolsHttp).toBe(none.totals.powertoolsHttp);
  });

  it('keeps each new large delivery\'s object for the bucket\'s lifecycle at the TTL (66 days at 35), completed or not: GB-months = objects x size x days / the month', () => {
    // Prepare: the lifecycle comes from the code, not from a literal.
    expect(DEFAULT_INPUTS.ttlDays * 86_400).toBe(DEFAULT_TTL_SECONDS);
    expect(bodyObjectLifeDays(DEFAULT_TTL_SECONDS)).toBe(66);
    // Act
    const cc = priceMonth(AT_2_PERCENT).claimCheck;
    // Assess: 9.5 M new deliveries, 2% of them large; a renewed object (1%) lives a lifecycle more; S3 bills up to the midnight after expiry.
    const objects = 10_000_000 * 0.95 * 0.02;
    expect(cc.objects).toBeCloseTo(objects, 6);
    expect(cc.lifeDays).toBe(66);
    expect(cc.billedLifeDays).toBe(66.5);
    const gbMonths = (objects * 1.01 * (66.5 / 30.4375) * 2 ** 20) / 2 ** 30;
    expect(cc.storedGb).toBeCloseTo(gbMonths, 6);
    expect(cc.usd.storage).toBeCloseTo(gbMonths * 0.023, 9);
    expect(cc.usd.storage).toBeCloseTo(9.42, 2);
    // Twice the size, twice the storage; the requests do not change with it (only the Lambda wait is per request).
    const large = priceMonth({ ...AT_2_PERCENT, largeBodyMib: 2 }).claimCheck;
    expect(large.usd.storage).toBeCloseTo(2 * cc.usd.storage, 9);
    expect(large.usd.requests).toBeCloseTo(cc.usd.requests, 9);
    // A shorter TTL, a shorter lifecycle.
    expect(priceMonth({ ...AT_2_PERCENT, ttlDays: 3 }).claimCheck.lifeDays).toBe(bodyObjectLifeDays(3 * 86_400));
  });

  it('makes a PUT for every copy of a large delivery, duplicates included, a GET for every receive the model counts, and a HEAD only for a sender that does not know the object\'s age', () => {
    // Act
    const cc = priceMonth({ ...AT_2_PERCENT, isolatedRoutes: 1, rateLimitedRoutes: 1, rateLimitedShare: 0.01, deferralsPerRun: 1 }).claimCheck;
    // Assess
    const fresh = 10_000_000 * 0.95;
    expect(cc.requests.put).toBeCloseTo(10_000_000 * 0.02, 6);
    // First runs, the rate gate's wake-ups, and per failure 4 more attempts, 12 dead-letter hand-backs and the redrive's receive.
    const failures = fresh * 0.001 * 0.02;
    expect(cc.requests.get).toBeCloseTo(fresh * 0.02 + fresh * 0.01 * 0.02 + failures * (4 + 12 + 1), 6);
    // The ingest and the executor know the age; the bulk redrive of a failure asks S3.
    expect(cc.requests.head).toBeCloseTo(failures, 6);
    expect(cc.requests.copy).toBeCloseTo(fresh * 0.02 * 0.01, 6);
    expect(cc.usd.put).toBeCloseTo(200_000 * 0.005 / 1000, 9);
    expect(cc.usd.get).toBeCloseTo(cc.requests.get * 0.0004 / 1000, 9);
    expect(cc.usd.requests).toBeCloseTo(cc.usd.put + cc.usd.get + cc.usd.head + cc.usd.copy + cc.usd.lambda, 9);
    // The ingest's PUT and the executor's GET are waited for: 50 ms at 512 MB each.
    expect(cc.lambdaGbSeconds).toBeCloseTo(((cc.requests.put + cc.requests.get) * 50 * 512) / 1024 / 1000, 6);
  });

  it('doubles the requests with the share, and the storage with it', () => {
    const at = (largeBodyShare: number) => priceMonth({ ...AT_2_PERCENT, largeBodyShare }).claimCheck.usd;
    expect(at(0.04).requests).toBeCloseTo(2 * at(0.02).requests, 9);
    expect(at(0.04).storage).toBeCloseTo(2 * at(0.02).storage, 9);
    expect(at(0.02).requests).toBeGreaterThan(0);
  });

  it('npm run cost prices 2% large bodies of 1 MiB by default, takes --large-share and --large-body-mib, refuses bad ones, and prints the lines and the bill without them', () => {
    const base = ['--deliveries-per-month', '10000000', '--duplicate-share', '0.05'];
    expect(costInputsOf(base).inputs).toMatchObject({ largeBodyShare: 0.02, largeBodyMib: 1 });
    expect(costInputsOf([...base, '--large-share', '0.05', '--large-body-mib', '2']).inputs).toMatchObject({ largeBodyShare: 0.05, largeBodyMib: 2 });
    expect(costInputsOf([...base, '--large-share', '0']).inputs).toMatchObject({ largeBodyShare: 0 });
    expect(() => costInputsOf([...base, '--large-share', '2'])).toThrow(/--large-share must be from 0 to 1/);
    expect(() => costInputsOf([...base, '--large-body-mib', '5'])).toThrow(/--large-body-mib must be at most 4.48/);
    expect(() => costInputsOf([...base, '--large-body-mib', '0'])).toThrow(/--large-body-mib must be above 0/);
    const report = priceMonth(costInputsOf(base).inputs);
    const table = costTable(report);
    for (const item of CLAIM_CHECK_LINES) expect(table).toContain(item);
    const dollars = (v: number) => `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
    const without = priceMonth({ ...costInputsOf(base).inputs, largeBodyShare: 0 }).totals.retryproof;
    expect(table).toContain(`2.0% of deliveries with a large body of 1.00 MiB on average cost ${dollars(report.claimCheck.usd.total)} a month`);
    expect(table).toContain(`with no large body it costs nothing and the bill is ${dollars(without)}`);
  });
});
