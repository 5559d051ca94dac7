/**
 * Prices retryproof on AWS against the benchmarked Powertools receiver behind a REST API.
 *
 *   npm run cost -- --deliveries-per-month 10000000 --duplicate-share 0.05 [--json]
 *
 * Prices are list prices (us-east-1) written down on PRICES_TAKEN, never fetched.
 */
import { DEFAULT_INPUTS, PRICES, PRICES_TAKEN, priceMonth } from './cost-model.ts';
import type { CostInputs, CostReport } from './cost-model.ts';
import { parseFlags, UsageError } from './flags.ts';

const USAGE = `usage: npm run cost -- --deliveries-per-month N --duplicate-share S [options]

  --deliveries-per-month N   deliveries a month, duplicates included (required)
  --duplicate-share S        share of them that are duplicates, 0 to below 1 (required)
  --body-bytes B             body size (default ${DEFAULT_INPUTS.bodyBytes})
  --memory-mb M              memory of each function (default ${DEFAULT_INPUTS.memoryMb})
  --action-ms T              the action's run time, in the executor (default ${DEFAULT_INPUTS.actionMs})
  --dynamo-ms T              one DynamoDB request in-region (default ${DEFAULT_INPUTS.dynamoMs})
  --sqs-ms T                 one SQS send in-region (default ${DEFAULT_INPUTS.sqsMs})
  --overhead-ms T            handler time besides requests (default ${DEFAULT_INPUTS.overheadMs})
  --ttl-days D               how long keys are kept, both stacks (default ${DEFAULT_INPUTS.ttlDays})
  --batch-fill K             messages per executor invocation, 1-10 (default ${DEFAULT_INPUTS.batchFill})
  --replay-memory-share S    share of new deliveries on GitHub/Shopify/hmac-sha256 routes, 0 to 1 (default ${DEFAULT_INPUTS.replayMemoryShare})
  --replay-memory-months M   months of those the replay memory holds; it never expires (default ${DEFAULT_INPUTS.replayMemoryMonths})
  --json                     print the report as JSON`;

const NUMBER_FLAGS = {
  'deliveries-per-month': 'deliveriesPerMonth',
  'duplicate-share': 'duplicateShare',
  'body-bytes': 'bodyBytes',
  'memory-mb': 'memoryMb',
  'action-ms': 'actionMs',
  'dynamo-ms': 'dynamoMs',
  'sqs-ms': 'sqsMs',
  'overhead-ms': 'overheadMs',
  'ttl-days': 'ttlDays',
  'batch-fill': 'batchFill',
  'replay-memory-share': 'replayMemoryShare',
  'replay-memory-months': 'replayMemoryMonths',
} as const satisfies Record<string, keyof CostInputs>;

/**
 * Reads the command line into cost inputs.
 * @throws UsageError naming the flag and the bad value
 */
export function costInputsOf(argv: readonly string[]): { inputs: CostInputs; json: boolean } {
  const spec: Record<string, 'number' | 'switch'> = { json: 'switch' };
  for (const flag of Object.keys(NUMBER_FLAGS)) spec[flag] = 'number';
  const flags = parseFlags(argv, spec);
  const get = (flag: keyof typeof NUMBER_FLAGS): number | undefined => flags.numbers.get(flag);
  const n = get('deliveries-per-month');
  const s = get('duplicate-share');
  if (n === undefined) throw new UsageError('--deliveries-per-month is required');
  if (s === undefined) throw new UsageError('--duplicate-share is required');
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--deliveries-per-month must be a whole number of 0 or more, got ${n}`);
  if (s < 0 || s >= 1) throw new UsageError(`--duplicate-share must be from 0 to below 1 (a share, not a percentage), got ${s}`);
  const inputs: Record<string, number> = { ...DEFAULT_INPUTS, deliveriesPerMonth: n, duplicateShare: s };
  for (const [flag, field] of Object.entries(NUMBER_FLAGS)) {
    const value = flags.numbers.get(flag);
    if (value === undefined || flag === 'deliveries-per-month' || flag === 'duplicate-share') continue;
    if (value < 0 || (value === 0 && flag !== 'action-ms' && flag !== 'overhead-ms' && flag !== 'replay-memory-share')) {
      throw new UsageError(`--${flag} must be above 0, got ${value}`);
    }
    inputs[field] = value;
  }
  const memory = inputs.memoryMb ?? 0;
  if (!Number.isInteger(memory) || memory < 128 || memory > 10_240) {
    throw new UsageError(`--memory-mb must be a whole number from 128 to 10240 (Lambda's range), got ${memory}`);
  }
  if ((inputs.replayMemoryShare ?? 0) > 1) throw new UsageError(`--replay-memory-share must be from 0 to 1 (a share), got ${inputs.replayMemoryShare}`);
  const fill = inputs.batchFill ?? 0;
  if (fill < 1 || fill > 10) throw new UsageError(`--batch-fill must be from 1 to 10 (an SQS batch holds at most 10), got ${fill}`);
  return { inputs: inputs as unknown as CostInputs, json: flags.switches.has('json') };
}

function usd(value: number): string {
  if (value === 0) return '$0.00';
  if (value < 0.01) return `$${value.toFixed(4)}`;
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

function ratio(a: number, b: number): string {
  return b === 0 ? '-' : `${(a / b).toFixed(2)}x`;
}

/** The report as a plain-text table. */
export function costTable(report: CostReport): string {
  const { inputs } = report;
  const rows = [
    ['item', 'retryproof', 'Powertools', 'ratio', 'basis'],
    ...report.lines.map((l) => [l.item, usd(l.retryproof), usd(l.powertools), ratio(l.retryproof, l.powertools), l.basis]),
    ['total a month', usd(report.totals.retryproof), usd(report.totals.powertools), ratio(report.totals.retryproof, report.totals.powertools), ''],
    [
      'per million deliveries',
      usd(report.perMillionDeliveries.retryproof),
      usd(report.perMillionDeliveries.powertools),
      ratio(report.perMillionDeliveries.retryproof, report.perMillionDeliveries.powertools),
      '',
    ],
  ];
  const header = rows[0] ?? [];
  const widths = header.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]): string =>
    r.map((cell, c) => (c === 0 || c === 4 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  ').trimEnd();
  const out = [
    `retryproof (HTTP API) against the Powertools receiver (REST API), us-east-1, a month:`,
    `${inputs.deliveriesPerMonth.toLocaleString('en-US')} deliveries, ${(inputs.duplicateShare * 100).toFixed(1)}% duplicates, ${inputs.bodyBytes} B bodies, ` +
      `${inputs.memoryMb} MB arm64, action ${inputs.actionMs} ms, TTL ${inputs.ttlDays} days`,
    '',
    `retryproof costs ${ratio(report.totals.retryproof, report.totals.powertools)} the REST API + Powertools pipeline: ` +
      `${usd(report.totals.retryproof)} against ${usd(report.totals.powertools)} a month.`,
    '',
    line(header),
    ...rows.slice(1).map(line),
    '',
    `Item sizes: retryproof record ${report.itemBytes.retryproofRecord} B, log entry ${report.itemBytes.retryproofLog} B; Powertools record ${report.itemBytes.powertoolsRecord} B.`,
    `Prices: list prices for us-east-1 as known on ${PRICES_TAKEN}, not fetched; free tiers left out; check them before use:`,
    ...[...new Set(Object.values(PRICES).map((p) => p.source))].map((s) => `  ${s}`),
    'Left out of both: CloudWatch Logs and metrics, X-Ray, KMS, data transfer, the action\'s own calls.',
  ];
  return out.join('\n');
}

/** JSON has no Infinity: the last price tier's bound is written as a string. */
function finite(_key: string, value: unknown): unknown {
  return value === Number.POSITIVE_INFINITY ? 'Infinity' : value;
}

function main(argv: readonly string[]): number {
  try {
    const { inputs, json } = costInputsOf(argv);
    const report = priceMonth(inputs);
    const ratioToPowertools = report.totals.powertools === 0 ? null : report.totals.retryproof / report.totals.powertools;
    process.stdout.write(
      `${json ? JSON.stringify({ pricesTaken: PRICES_TAKEN, prices: PRICES, ratioToPowertools, ...report }, finite, 2) : costTable(report)}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
