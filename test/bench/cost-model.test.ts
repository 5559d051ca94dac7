import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { costInputsOf, costTable } from '../../bench/cost.ts';
import { committedLogFigures, DEFAULT_INPUTS, failedRecordBytes, PRICES, priceMonth, retryproofReadUnits, tiered, tracesRecorded } from '../../bench/cost-model.ts';
import { UsageError } from '../../bench/flags.ts';
import { logBytesPerDelivery } from '../../bench/log-figures.ts';

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
    for (const item of ['CloudWatch custom metrics', 'CloudWatch dashboard', 'X-Ray traces', 'KMS', 'Secrets Manager', 'EventBridge Scheduler']) {
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
    const json = JSON.parse(stdout) as { totals: { retryproof: number; powertools: number; powertoolsHttp: number }; observability: { retryproof: number } };
    // Assess
    const report = priceMonth(AT_10M);
    expect(json.totals.retryproof).toBeCloseTo(report.totals.retryproof, 6);
    expect(json.totals.powertools).toBeCloseTo(report.totals.powertools, 6);
    expect(json.totals.powertoolsHttp).toBeCloseTo(report.totals.powertoolsHttp, 6);
    expect(json.observability.retryproof).toBeCloseTo(report.observability.retryproof, 6);
    expect(json.totals.powertoolsHttp).toBeLessThan(json.totals.powertools);
  });
});
