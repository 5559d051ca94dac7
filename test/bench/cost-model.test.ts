import { describe, expect, it } from 'vitest';
import { costInputsOf, costTable } from '../../bench/cost.ts';
import { DEFAULT_INPUTS, PRICES, priceMonth, retryproofReadUnits, tiered } from '../../bench/cost-model.ts';
import { UsageError } from '../../bench/flags.ts';

describe('the cost model', () => {
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
});
