/** BENCHMARKS.md's section on the executor against the Powertools SQS consumer, and workload c's executor. */
import { EXECUTOR_SCENARIOS, roundSpread } from './executor-figures.ts';
import type { ExecutorScenario, ExecutorScenarioName } from './executor-figures.ts';
import type { Measurements } from './measurements.ts';

const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '-');
const f3 = (n: number): string => (Number.isFinite(n) ? n.toFixed(3) : '-');
const x = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');
const ops = (byOperation: Record<string, number>): string =>
  Object.entries(byOperation)
    .sort((a, b) => b[1] - a[1])
    .map(([op, c]) => `${op.replace('Command', '')} ${c}`)
    .join(', ');

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 || i === header.length - 1 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

type Row = readonly [string, ExecutorScenarioName, (s: ExecutorScenario) => number, (n: number) => string];

/** The figures, per executed message, both executors, with the ratio and its spread over rounds. */
export function executorFigureRows(m: Measurements): string[][] {
  const e = m.executors;
  const rows: Row[] = [
    ['DynamoDB requests per executed message (backlog)', 'backlog', (s) => s.requestsPerExecuted, f2],
    ['DynamoDB requests per executed message (at rest)', 'rest', (s) => s.requestsPerExecuted, f2],
    ['DynamoDB requests per executed message (storm)', 'storm', (s) => s.requestsPerExecuted, f2],
    ['DynamoDB requests per executed message (duplicate messages)', 'resent', (s) => s.requestsPerExecuted, f2],
    ['write units per executed message, measured (backlog)', 'backlog', (s) => s.writeUnitsPerExecuted, f2],
    ['write units per executed message, measured (storm)', 'storm', (s) => s.writeUnitsPerExecuted, f2],
    ['write units per executed message, measured (duplicate messages)', 'resent', (s) => s.writeUnitsPerExecuted, f2],
    ['refused conditional writes per executed message (storm; billed 1 unit each on DynamoDB)', 'storm', (s) => s.refusedWritesPerExecuted, f2],
    ['refused conditional writes per executed message (duplicate messages)', 'resent', (s) => s.refusedWritesPerExecuted, f2],
    ['executor CPU ms per executed message (backlog)', 'backlog', (s) => s.cpuMsPerExecuted, f3],
    ['executor CPU ms per executed message (at rest, idle polling included)', 'rest', (s) => s.cpuMsPerExecuted, f3],
    ['executor CPU ms per executed message (storm, idle polling included)', 'storm', (s) => s.cpuMsPerExecuted, f3],
    ['executor CPU ms per executed message (duplicate messages, idle polling included)', 'resent', (s) => s.cpuMsPerExecuted, f3],
    ['throughput, executed messages/s (backlog, batch 10)', 'backlog', (s) => s.throughput, f1],
    ['accept-to-effect p50 ms (at rest)', 'rest', (s) => s.p50, f1],
    ['accept-to-effect p99 ms (at rest)', 'rest', (s) => s.p99, f1],
    ['accept-to-effect p50 ms (storm)', 'storm', (s) => s.p50, f1],
    ['accept-to-effect p99 ms (storm)', 'storm', (s) => s.p99, f1],
    ['accept-to-effect p50 ms (duplicate messages)', 'resent', (s) => s.p50, f1],
    ['accept-to-effect p99 ms (duplicate messages)', 'resent', (s) => s.p99, f1],
    ['of which from the batch hand-over to the effect, p50 ms (at rest)', 'rest', (s) => s.inBatchP50, f1],
    ['of which from the batch hand-over to the effect, p50 ms (storm)', 'storm', (s) => s.inBatchP50, f1],
    ['of which from the batch hand-over to the effect, p50 ms (duplicate messages)', 'resent', (s) => s.inBatchP50, f1],
    ["the sender's answer after the work's SendMessage, p50 ms (at rest)", 'rest', (s) => s.answerLagP50, f1],
    ['front (ingest) DynamoDB requests per executed message (storm: claims and duplicates)', 'storm', (s) => s.frontRequestsPerExecuted, f2],
    ["front CPU ms per delivery, the sender's process (storm)", 'storm', (s) => s.frontCpuMsPerDelivery, f2],
    ['executor DynamoDB time per executed message, ms (at rest)', 'rest', (s) => s.requestMsPerExecuted, f2],
    ['executor DynamoDB time per executed message, ms (storm)', 'storm', (s) => s.requestMsPerExecuted, f2],
    ['keys whose effect ran more than once (storm)', 'storm', (s) => s.keysMoreThanOnce, (n) => String(n)],
    ['keys whose effect ran more than once (duplicate messages)', 'resent', (s) => s.keysMoreThanOnce, (n) => String(n)],
  ];
  return rows.map(([label, scenario, pick, format]) => {
    const rp = e[scenario].retryproof;
    const pt = e[scenario].powertools;
    const [lo, hi] = roundSpread(rp, pt, pick);
    const r = pick(rp) / pick(pt);
    return [label, format(pick(rp)), format(pick(pt)), x(r), Number.isFinite(lo) ? `${x(lo)}-${x(hi)}` : '-'];
  });
}

/** The executor section of BENCHMARKS.md. */
export function executorSection(m: Measurements): string[] {
  const s = m.settings.executors;
  const e = m.executors;
  const scenarioRows = (Object.keys(EXECUTOR_SCENARIOS) as ExecutorScenarioName[]).flatMap((name) =>
    (['retryproof', 'powertools'] as const).map((n) => {
      const sc = e[name][n];
      return [
        `${name}: ${EXECUTOR_SCENARIOS[name]}`,
        n === 'retryproof' ? 'retryproof' : 'Powertools consumer',
        String(sc.deliveries),
        String(sc.received),
        String(sc.executed),
        ops(sc.byOperation),
      ];
    }),
  );
  return [
    '## The executor against the Powertools SQS consumer',
    '',
    `Per executed message (one effect of one key), over ${s.rounds} rounds; the ratio is retryproof / Powertools, the spread the lowest ` +
      'and highest ratio of a single round.',
    '',
    table(['figure', "retryproof's executor", 'Powertools consumer', 'ratio', 'spread over rounds'], executorFigureRows(m)),
    '',
    table(
      ['scenario', 'executor', 'deliveries', 'messages received', 'executed', 'DynamoDB requests'],
      scenarioRows,
    ),
    '',
    '### How it is measured',
    '',
    "- **The peer** is the consumer a team would write with Powertools (`bench/receivers/powertools-consumer.ts`, deployed form in " +
      '`bench/entries/powertools-consumer.ts`): `processPartialResponse(event, makeIdempotent(recordHandler, { persistenceStore: new ' +
      'DynamoDBPersistenceLayer(...), config }), new BatchProcessor(EventType.SQS), { context })`, `config.registerLambdaContext(context)` on ' +
      "each invocation, the key `powertools_json(body).[route, key]` (the delivery's route and key, not the SQS message id, which a " +
      "duplicate does not share), 35 days' expiry as retryproof's TTL, no local cache. Records run in parallel within a batch, Powertools' default and retryproof's setting.",
    "- **retryproof** is its real executor as the Lambda wires it (`wireExecutor`: lease, the route's pause check, fenced completion, " +
      'Logger and Metrics with logs silenced and metrics disabled).',
    '- **The same action** for both: it stamps the time and reports the key to the benchmark over the IPC channel, nothing else.',
    '- **Own processes.** Each executor runs in a child process of its own (`bench/executor-process.ts`) on its own queue and table, ' +
      `polled as Lambda's event source does: ${s.pollers} pollers, batches of 10, the successes deleted in one batch, ${s.idleMs} ms between ` +
      'two empty receives. CPU is `process.cpuUsage()` of that child alone; DynamoDB requests are counted by a middleware on its own client, ' +
      'write units by `ReturnConsumedCapacity: INDEXES` on the same client (DynamoDB Local reports none for a refused conditional write, ' +
      'which DynamoDB bills at 1 unit or more: counted apart). The executors take turns, alternating which goes first each round.',
    "- **The fronts.** This process is the sender and each pipeline's front, the same kind of front for both, so both pipelines " +
      "load this machine's DynamoDB Local and cores alike before their executor: retryproof's is its real ingest (claim, SQS send, the " +
      "answer's mark, 202); the consumer's is the Powertools ingest peer of the ingest benchmark (`makeHandlerIdempotent`, verification " +
      "first, then the SQS send), queueing onto the consumer's queue, as a team with Powertools on both sides deploys it. Accept-to-effect " +
      "runs, for both, from the moment the work's SendMessage returned (stamped by a wrapper around each front's `WorkQueue`) to the " +
      "action's stamp (`performance.timeOrigin + performance.now()` in both processes), for the first effect of each key. The sender's " +
      'answer comes after that (its own row above): timed from the answer, the pipeline whose answer lags more would look faster, so the ' +
      'goal is held to the send, the same instant for both.',
    `- **Scenarios.** backlog: ${s.backlog} unique deliveries accepted with the executor stopped, then timed from its start to the last ` +
      `effect (the throughput at batch size 10). At rest: ${s.rest} deliveries one at a time, each once the previous effect ran. Storm: ` +
      `${s.storm.deliveries} deliveries at ${s.storm.perSecond}/s whatever the answers' speed (the same arrivals for both), ` +
      `${Math.round(s.storm.duplicateShare * 100)}% of them repeating a key accepted at least ${s.storm.retryAfterMs} ms earlier (a sender's ` +
      "retry after a lost answer); the round ends when every key's effect ran and the queue is empty. Under the storm each front answers the " +
      "duplicates from its own record, so they reach neither executor; the fronts' requests are in their own row. Duplicate messages: " +
      "the same arrivals, but every duplicate is the accepted work message queued once more past the front (SQS's at-least-once " +
      "delivery, a resend), so both executors receive the same messages, duplicates included. Each round's queue is empty before the next scenario.",
    '',
    '### Workload c: whose work is measured',
    '',
    "While workload c runs, each receiver's queue is drained by an executor in a process of its own (`bench/executor-process.ts`, " +
      "the same as above), started only during that receiver's rounds: retryproof's by its executor, as on AWS, and the peers' by the " +
      'Powertools SQS consumer on a table of its own, so every receiver pays the same kind of competition for the two cores. The CPU and ' +
      "latency of c are this process's alone (the ingest, its SDK clients and the sender), so no receiver's figures include another's " +
      "executor, nor its own; DynamoDB Local and fauxqs run in processes of their own as before. What the executors did over c's rounds:",
    '',
    table(
      ['receiver', 'executor', 'messages received', 'actions run', 'CPU ms', 'CPU ms per message', 'DynamoDB requests'],
      (['retryproof', 'powertools', 'naive'] as const).map((n) => {
        const c = m.workloadCExecutor[n];
        return [
          n === 'retryproof' ? 'retryproof' : n === 'powertools' ? 'Powertools' : 'naive',
          n === 'retryproof' ? "retryproof's executor" : 'Powertools SQS consumer',
          String(c.received),
          String(c.executed),
          f1(c.cpuMicros / 1000),
          f3(c.cpuMicros / 1000 / Math.max(1, c.received)),
          `${c.requests} (${ops(c.byOperation) || 'none'})`,
        ];
      }),
    ),
    '',
    "None of it is counted with the ingests'. " +
      "Elsewhere retryproof's executor runs in this process only outside what is measured: in e it drains the first deliveries' work " +
      "before the retries, and e's CPU and latency count the retries alone; after the storm it drains the storm's messages, and the " +
      'storm counts effects, not time.',
  ];
}
