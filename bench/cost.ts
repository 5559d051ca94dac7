/**
 * Prices retryproof on AWS, the whole bill (requests and what it pays to be watched), against
 * the benchmarked Powertools receiver behind a REST API and behind an HTTP API, both operated.
 *
 *   npm run cost -- --deliveries-per-month 10000000 --duplicate-share 0.05 [--json]
 *
 * Prices are list prices (us-east-1) written down on PRICES_TAKEN and OBSERVABILITY_PRICES_TAKEN,
 * never fetched. Log bytes are bench/log-bytes.json's, measured by bench/log-bytes.ts.
 */
import { MAX_BODY_BYTES } from '../lambdas/domain/body-object.ts';
import { CLAIM_CHECK_PRICES_TAKEN, COST_COMMAND_DEFAULTS, DEFAULT_INPUTS, OBSERVABILITY_PRICES_TAKEN, PRICES, PRICES_TAKEN, priceMonth } from './cost-model.ts';
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
  --failure-share S          share of new deliveries that fail for good and enter the failed index, 0 to 1 (default ${DEFAULT_INPUTS.failureShare})
  --log-retention-days D     days every log group keeps its lines, peers' too (default ${DEFAULT_INPUTS.logRetentionDays})
  --warm-ingest-instances K  ingest instances alive at once, each reading the secrets once a minute (default ${DEFAULT_INPUTS.warmIngestInstances})
  --isolated-routes N        routes on a queue of their own (rateLimit, concurrency or ownQueue), each polled all month (default ${COST_COMMAND_DEFAULTS.isolatedRoutes})
  --rate-limited-routes R    of those, the rate-limited ones, each with a backlog alarm (default ${COST_COMMAND_DEFAULTS.rateLimitedRoutes}, at most N)
  --rate-limited-share S     share of new deliveries on rate-limited routes, 0 to 1 (default ${COST_COMMAND_DEFAULTS.rateLimitedShare} with a rate-limited route, else 0)
  --deferrals-per-run D      refusals per admitted run on a rate-limited route: 0 under the limit (default ${COST_COMMAND_DEFAULTS.deferralsPerRun})
  --large-share S            share of deliveries with a body for the S3 claim check (above claimCheckAboveBytes), 0 to 1 (default ${COST_COMMAND_DEFAULTS.largeBodyShare})
  --large-body-mib M         their average size in MiB, at most ${(MAX_BODY_BYTES / 2 ** 20).toFixed(2)} (default ${DEFAULT_INPUTS.largeBodyMib})
  --large-renewal-share S    share of their objects renewed once, their record living past its TTL, 0 to 1 (default ${DEFAULT_INPUTS.largeRenewalShare})
  --s3-ms T                  one S3 PUT or GET of such a body in-region (default ${DEFAULT_INPUTS.s3Ms})
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
  'failure-share': 'failureShare',
  'log-retention-days': 'logRetentionDays',
  'warm-ingest-instances': 'warmIngestInstances',
  'isolated-routes': 'isolatedRoutes',
  'rate-limited-routes': 'rateLimitedRoutes',
  'rate-limited-share': 'rateLimitedShare',
  'deferrals-per-run': 'deferralsPerRun',
  'large-share': 'largeBodyShare',
  'large-body-mib': 'largeBodyMib',
  'large-renewal-share': 'largeRenewalShare',
  's3-ms': 's3Ms',
} as const satisfies Record<string, keyof CostInputs>;

/** Flags that may be 0. */
const ZERO_ALLOWED: ReadonlySet<string> = new Set([
  'action-ms',
  'overhead-ms',
  'replay-memory-share',
  'isolated-routes',
  'rate-limited-routes',
  'rate-limited-share',
  'deferrals-per-run',
  'large-share',
  'large-renewal-share',
]);

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
  // One isolated, rate-limited route unless told otherwise; fewer routes take their defaults down with them.
  const isolated = get('isolated-routes') ?? COST_COMMAND_DEFAULTS.isolatedRoutes;
  const rateLimited = get('rate-limited-routes') ?? Math.min(COST_COMMAND_DEFAULTS.rateLimitedRoutes, isolated);
  const inputs: Record<string, number> = {
    ...DEFAULT_INPUTS,
    ...COST_COMMAND_DEFAULTS,
    rateLimitedShare: rateLimited > 0 ? COST_COMMAND_DEFAULTS.rateLimitedShare : 0,
    isolatedRoutes: isolated,
    rateLimitedRoutes: rateLimited,
    deliveriesPerMonth: n,
    duplicateShare: s,
  };
  for (const [flag, field] of Object.entries(NUMBER_FLAGS)) {
    const value = flags.numbers.get(flag);
    if (value === undefined || flag === 'deliveries-per-month' || flag === 'duplicate-share') continue;
    if (value < 0 || (value === 0 && !ZERO_ALLOWED.has(flag))) {
      throw new UsageError(`--${flag} must be above 0, got ${value}`);
    }
    inputs[field] = value;
  }
  for (const flag of ['isolated-routes', 'rate-limited-routes'] as const) {
    const value = get(flag);
    if (value !== undefined && !Number.isInteger(value)) throw new UsageError(`--${flag} must be a whole number, got ${value}`);
  }
  if ((inputs.rateLimitedRoutes ?? 0) > (inputs.isolatedRoutes ?? 0)) {
    throw new UsageError(`--rate-limited-routes must be at most --isolated-routes (a rate limit gives a route its own queue), got ${inputs.rateLimitedRoutes} of ${inputs.isolatedRoutes}`);
  }
  if ((inputs.rateLimitedShare ?? 0) > 1) throw new UsageError(`--rate-limited-share must be from 0 to 1 (a share), got ${inputs.rateLimitedShare}`);
  if ((inputs.rateLimitedShare ?? 0) > 0 && inputs.rateLimitedRoutes === 0) {
    throw new UsageError(`--rate-limited-share ${inputs.rateLimitedShare} needs a rate-limited route: set --rate-limited-routes`);
  }
  const memory = inputs.memoryMb ?? 0;
  if (!Number.isInteger(memory) || memory < 128 || memory > 10_240) {
    throw new UsageError(`--memory-mb must be a whole number from 128 to 10240 (Lambda's range), got ${memory}`);
  }
  if ((inputs.replayMemoryShare ?? 0) > 1) throw new UsageError(`--replay-memory-share must be from 0 to 1 (a share), got ${inputs.replayMemoryShare}`);
  if ((inputs.failureShare ?? 0) > 1) throw new UsageError(`--failure-share must be from 0 to 1 (a share), got ${inputs.failureShare}`);
  if ((inputs.largeBodyShare ?? 0) > 1) throw new UsageError(`--large-share must be from 0 to 1 (a share), got ${inputs.largeBodyShare}`);
  if ((inputs.largeRenewalShare ?? 0) > 1) throw new UsageError(`--large-renewal-share must be from 0 to 1 (a share), got ${inputs.largeRenewalShare}`);
  if ((inputs.largeBodyMib ?? 0) * 2 ** 20 > MAX_BODY_BYTES) {
    throw new UsageError(`--large-body-mib must be at most ${(MAX_BODY_BYTES / 2 ** 20).toFixed(2)} (the largest body the receiver accepts, ${MAX_BODY_BYTES} B), got ${inputs.largeBodyMib}`);
  }
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

/** The report as a plain-text table, then the note, the log bytes per delivery line by line, and the hosted gateways. */
export function costTable(report: CostReport): string {
  const { inputs } = report;
  /** One row: retryproof's figure and each peer's, with the ratio to each. */
  const row = (label: string, t: { retryproof: number; powertools: number; powertoolsHttp: number }, basis = ''): string[] => [
    label,
    usd(t.retryproof),
    usd(t.powertools),
    ratio(t.retryproof, t.powertools),
    usd(t.powertoolsHttp),
    ratio(t.retryproof, t.powertoolsHttp),
    basis,
  ];
  const rows = [
    ['item', 'retryproof', 'REST+PT', 'ratio', 'HTTP+PT', 'ratio', 'basis'],
    ...report.lines.map((l) => row(`${l.observability ? '* ' : ''}${l.item}`, l, l.basis)),
    row('requests', report.core),
    row('* observability', report.observability),
    row('total a month', report.totals),
    row('per million deliveries', report.perMillionDeliveries),
  ];
  const header = rows[0] ?? [];
  const widths = header.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]): string =>
    r.map((cell, c) => (c === 0 || c === 6 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  ').trimEnd();
  const toHttp = report.ratios.toPowertoolsHttp;
  const cut = report.logCut;
  const shares = (label: string, bytes: typeof cut.after.logBytesPerDelivery): string[] => [
    `  ${label}: ${bytes.total.toFixed(0)} B per delivery (the functions' own lines ${bytes.functionsOwn.toFixed(0)} B)`,
    ...bytes.shares.map(
      (s) =>
        `    ${`${s.source} ${s.kind}`.padEnd(22)} ${s.bytesPerDelivery.toFixed(s.bytesPerDelivery < 1 ? 3 : 0).padStart(7)} B  ${((s.bytesPerDelivery / bytes.total) * 100).toFixed(1).padStart(5)}%`,
    ),
  ];
  const peer = report.peerLogBytesPerDelivery;
  const cc = report.claimCheck;
  const out = [
    `retryproof (HTTP API) against the Powertools receiver behind a REST API (REST+PT) and behind an HTTP API (HTTP+PT), each operated, us-east-1, a month:`,
    `${inputs.deliveriesPerMonth.toLocaleString('en-US')} deliveries, ${(inputs.duplicateShare * 100).toFixed(1)}% duplicates, ${inputs.bodyBytes} B bodies, ` +
      `${inputs.memoryMb} MB arm64, action ${inputs.actionMs} ms, TTL ${inputs.ttlDays} days, logs kept ${inputs.logRetentionDays} days`,
    '',
    `retryproof costs ${ratio(report.totals.retryproof, report.totals.powertools)} the REST API + Powertools pipeline: ` +
      `${usd(report.totals.retryproof)} against ${usd(report.totals.powertools)} a month.`,
    `retryproof costs ${toHttp === null ? '-' : `${toHttp.toFixed(2)}x`} the HTTP API + Powertools pipeline, both operated: ` +
      `${usd(report.totals.retryproof)} against ${usd(report.totals.powertoolsHttp)} (goal: at most ${report.goalRatioToPowertoolsHttp.toFixed(1)}x; ` +
      `${toHttp !== null && toHttp <= report.goalRatioToPowertoolsHttp ? 'met' : 'not met'}).`,
    `The log cut (issue 26): the bill ${usd(cut.before.bill)} before, ${usd(cut.after.bill)} after; log bytes per delivery ${cut.before.logBytesPerDelivery.total.toFixed(0)} -> ` +
      `${cut.after.logBytesPerDelivery.total.toFixed(0)} (${((cut.after.logBytesPerDelivery.total / cut.before.logBytesPerDelivery.total) * 100).toFixed(0)}%), ` +
      `the functions' own ${cut.before.logBytesPerDelivery.functionsOwn.toFixed(0)} -> ${cut.after.logBytesPerDelivery.functionsOwn.toFixed(0)} ` +
      `(${((cut.after.logBytesPerDelivery.functionsOwn / cut.before.logBytesPerDelivery.functionsOwn) * 100).toFixed(0)}%).`,
    `Observability is ${(report.observability.retryproofShare * 100).toFixed(0)}% of retryproof's bill (${usd(report.observability.retryproof)}; the lines marked *).`,
    `The S3 claim check (issue 24): ${(inputs.largeBodyShare * 100).toFixed(1)}% of deliveries with a large body of ${inputs.largeBodyMib.toFixed(2)} MiB on average cost ` +
      `${usd(cc.usd.total)} a month (requests ${usd(cc.usd.requests)}, storage ${usd(cc.usd.storage)} for ${cc.lifeDays} days an object); ` +
      `with no large body it costs nothing and the bill is ${usd(report.totals.retryproof - cc.usd.total)}.`,
    '',
    line(header),
    ...rows.slice(1).map(line),
    '',
    'Log bytes per delivery, measured (bench/log-bytes.json; Lambda\'s lines and the access log modelled from AWS\'s documented formats), each line\'s share:',
    ...shares('retryproof now', cut.after.logBytesPerDelivery),
    ...shares('retryproof before the cut', cut.before.logBytesPerDelivery),
    `  each peer: ${peer.total.toFixed(0)} B per delivery (ingest ${peer.ingest.toFixed(0)}: Lambda's lines and one Powertools line; consumer ${peer.consumer.toFixed(0)} per delivery at ${inputs.batchFill} a batch; access log ${peer.access.toFixed(0)})`,
    '',
    `Hosted gateways, per million deliveries (retryproof ${usd(report.perMillionDeliveries.retryproof)}), as looked up ${OBSERVABILITY_PRICES_TAKEN}:`,
    ...report.hostedGateways.map((g) => `  ${g.name.padEnd(9)} ${g.usdPerMillion === undefined ? 'no price' : usd(g.usdPerMillion)}: ${g.basis} (${g.source})`),
    '',
    `Item sizes: retryproof record ${report.itemBytes.retryproofRecord} B, log entry ${report.itemBytes.retryproofLog} B; Powertools record ${report.itemBytes.powertoolsRecord} B.`,
    `Prices: list prices for us-east-1 as known on ${PRICES_TAKEN} (observability ${OBSERVABILITY_PRICES_TAKEN}, S3 ${CLAIM_CHECK_PRICES_TAKEN}), not fetched; free tiers left out; check them before use:`,
    ...[...new Set(Object.values(PRICES).map((p) => p.source))].map((s) => `  ${s}`),
    'Left out: data transfer, the action\'s own calls, SNS notifications, Logs Insights queries, and KMS requests; and, of large bodies, the HTTP API\'s metering in 512 KB increments ' +
      '(a 1 MiB delivery counts as 3 requests, for the HTTP API peer too).',
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
    const ratioToPowertools = report.ratios.toPowertoolsRest;
    process.stdout.write(
      `${json ? JSON.stringify({ pricesTaken: PRICES_TAKEN, observabilityPricesTaken: OBSERVABILITY_PRICES_TAKEN, prices: PRICES, ratioToPowertools, ...report }, finite, 2) : costTable(report)}\n`,
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
