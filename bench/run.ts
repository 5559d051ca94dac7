/**
 * The benchmark: retryproof, Powertools idempotency and the naive check-then-act, side by
 * side on DynamoDB Local and fauxqs, in one run, on the same data; then retryproof's executor
 * against a Powertools SQS consumer, each in a process of its own. Writes BENCHMARKS.md.
 *
 *   npm run bench                       # the full run, about 3 to 5 minutes; writes BENCHMARKS.md
 *   npm run bench -- --quick            # a smoke run; writes bench/.build/BENCHMARKS.quick.md
 *   npm run -s bench -- --json          # the full run, and its headline figures as one JSON object on stdout
 *   npm run -s bench -- --quick --json  # only what the JSON carries, at the smoke run's sizes; no report
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { measureBundles } from './bundles.ts';
import { phaseProfiler } from './cpu-profile.ts';
import { ExecutorProcess, runExecutorBench } from './executor-bench.ts';
import type { ExecutorMeasurements } from './executor-figures.ts';
import { benchJsonOf, benchJsonText, JSON_PEERS } from './figures-json.ts';
import type { JsonMeasurements } from './figures-json.ts';
import { UsageError } from './flags.ts';
import { localDynamoClient } from '../local/aws-clients.ts';
import { startBenchServices } from './local-services.ts';
import type { BenchServices } from './local-services.ts';
import { mergeLoads, WORKLOADS } from './measurements.ts';
import type { LoadWorkload, Measurements, MergedLoad, RunSettings, WorkloadCExecutor } from './measurements.ts';
import { RECEIVER_NAMES } from './receivers/receiver.ts';
import type { ReceiverName } from './receivers/receiver.ts';
import { renderReport } from './report.ts';
import { createBenchStack } from './stack.ts';
import type { BenchReceiver, BenchStack } from './stack.ts';
import { percentile } from './stats.ts';
import { createPowertoolsTable } from './tables.ts';
import { runKeyReuse, runLoad, runRetries, runStorm } from './workloads.ts';
import type { KeyReuseResult, LoadResult, StormResult } from './workloads.ts';

const ROOT = resolve(import.meta.dirname, '..');

export function settingsFor(quick: boolean): RunSettings {
  return {
    quick,
    rounds: quick ? 3 : 6,
    warmup: quick ? 100 : 400,
    deliveries: quick ? { a: 60, b: 300, c: 300, e: 60 } : { a: 600, b: 3000, c: 3000, e: 600 },
    concurrency: { a: 1, b: 16, c: 16, e: 1 },
    duplicateShare: 0.3,
    bodyBytes: 1024,
    retryBodyBytes: 2048,
    storm: {
      keys: quick ? 30 : 200,
      copies: 10,
      keyConcurrency: 20,
      jitterMs: 20,
      ladderMs: [10, 50],
      effectMs: 150,
    },
    coldInitRuns: quick ? 3 : 15,
    executors: {
      rounds: quick ? 2 : 6,
      backlog: quick ? 20 : 600,
      rest: quick ? 5 : 50,
      // Below both executors' throughput on this machine, so the storm measures the duplicates, not a queue that only grows.
      storm: { deliveries: quick ? 24 : 240, perSecond: 120, duplicateShare: 0.3, retryAfterMs: 100 },
      pollers: 2,
      idleMs: 5,
      bodyBytes: 1024,
    },
  };
}

/** Round r's order of the receivers: every rotation and its reverse, so none is always first. */
function orderOf<T>(items: readonly T[], round: number): T[] {
  const rotated = items.map((_, i) => items[(i + round) % items.length] as T);
  return Math.floor(round / items.length) % 2 === 1 ? rotated.reverse() : rotated;
}

function describeLoad(l: LoadResult): string {
  return (
    `${l.deliveries} deliveries (${l.duplicateDeliveries} duplicates) in ${(l.wallMs / 1000).toFixed(1)} s, ` +
    `p50 ${percentile(l.latenciesMs, 50).toFixed(1)} ms, p99 ${percentile(l.latenciesMs, 99).toFixed(1)} ms, ` +
    `${l.requests} DynamoDB requests (${(l.requests / l.deliveries).toFixed(2)}/delivery), ${l.executions} executions, ` +
    `answers ${Object.entries(l.statuses)
      .map(([s, c]) => `${s}:${c}`)
      .join(' ')}`
  );
}

function describeStorm(s: StormResult): string {
  const executed = s.executed === undefined ? '' : `; executor ran the action ${s.executed.total} times (${s.executed.keysMoreThanOnce} keys more than once)`;
  return (
    `${s.invocations} invocations (${s.retries} retries), answers ${Object.entries(s.statuses)
      .map(([k, v]) => `${k}:${v}`)
      .join(' ')}, ${s.requests} DynamoDB requests, decided to execute ${s.decided.total} times ` +
    `(${s.decided.keysMoreThanOnce} of ${s.keys} keys more than once, max ${s.decided.maxPerKey})${executed}`
  );
}

type Log = (line: string) => void;

/** What workloads a to e measured, per receiver, and what their runs metered beside. */
interface LoadMeasurements<W extends LoadWorkload, R extends ReceiverName> {
  readonly loads: Record<W, Record<R, MergedLoad>>;
  readonly writeUnits: Measurements['writeUnits'];
  readonly powertoolsWriteUnits: Measurements['powertoolsWriteUnits'];
  readonly workloadCExecutor: Record<R, WorkloadCExecutor>;
}

/** The stack's receivers named in `names`. */
function receiversNamed(stack: BenchStack, names: readonly ReceiverName[]): readonly BenchReceiver[] {
  return stack.receivers.filter((r) => names.includes(r.name));
}

/** Runs the consumer until it has executed `messages` keys (all that e's first deliveries queued); its write units. */
async function consumeRound(consumer: ExecutorProcess, messages: number): Promise<number> {
  consumer.run(2);
  await consumer.until(() => new Set(consumer.effects.map((e) => e.key)).size >= messages, 120_000, `${messages} consumer effects`);
  return (await consumer.stop()).writeUnits;
}

/** The workloads named, in WORKLOADS' order, each receiver named in every round, in rotating order. */
async function measureLoads<W extends LoadWorkload, R extends ReceiverName>(
  services: BenchServices,
  stack: BenchStack,
  settings: RunSettings,
  workloads: readonly W[],
  names: readonly R[],
  log: Log,
): Promise<LoadMeasurements<W, R>> {
  const receivers = receiversNamed(stack, names);
  const runs = (w: LoadWorkload): boolean => (workloads as readonly LoadWorkload[]).includes(w);
  let writeUnits: Measurements['writeUnits'];
  let powertoolsWriteUnits: Measurements['powertoolsWriteUnits'];
  // In c every receiver's queue is drained while it is measured, each by an executor in a process
  // of its own: retryproof's by its executor, the peers' by the Powertools SQS consumer on a table
  // of its own. So each pays the same kind of competition for the cores, and no executor's CPU or
  // requests are counted with any receiver's. In e, Powertools' consumer also takes its pipeline's
  // work, whose write units complete the life of a Powertools delivery.
  const profiler = phaseProfiler();
  const drained = receivers.filter((r) => runs('c') || (runs('e') && r.name === 'powertools'));
  const admin = localDynamoClient(services.dynamo);
  const startExecutor = async (r: BenchReceiver): Promise<[ReceiverName, ExecutorProcess]> => {
    const tableName = r.name === 'retryproof' ? stack.retryproofTable : await createPowertoolsTable(admin, `bench-c-${randomUUID().slice(0, 8)}-${r.name}-consumer`);
    const executor = r.name === 'retryproof' ? 'retryproof' : 'powertools';
    return [r.name, await ExecutorProcess.start({ executor, dynamo: services.dynamo, sqs: services.sqs, tableName, queueUrl: r.queueUrl, idleMs: 20 })];
  };
  const cExecutors: Partial<Record<ReceiverName, ExecutorProcess>> = Object.fromEntries(await Promise.all(drained.map(startExecutor)));
  admin.destroy();
  const workloadCExecutor = Object.fromEntries(
    receivers.map((r) => [r.name, { received: 0, executed: 0, cpuMicros: 0, requests: 0, byOperation: {} }]),
  ) as Record<ReceiverName, { received: number; executed: number; cpuMicros: number; requests: number; byOperation: Record<string, number> }>;
  const loads = {} as Record<W, Record<ReceiverName, MergedLoad>>;
  try {
    for (const w of (Object.keys(WORKLOADS) as LoadWorkload[]).filter(runs) as W[]) {
      if (w === 'c' || w === 'e') {
        // The earlier workloads' messages are never executed here: an executor busy with that
        // backlog would leave the work of c and e untaken, as no deployment's would be.
        for (const r of receivers) await stack.purge(r.queueUrl);
      }
      const meter = w === 'e' ? stack.meterRetryproofWrites() : undefined;
      const ptMeter = w === 'e' ? stack.meterPowertoolsWrites() : undefined;
      const metered = { first: 0, retry: 0, powertools: 0, consumerUnits: 0 };
      const rounds = new Map<ReceiverName, { results: LoadResult[]; cpu: number }>(receivers.map((r) => [r.name, { results: [], cpu: 0 }]));
      const perRound = Math.ceil(settings.deliveries[w] / settings.rounds);
      for (let round = 0; round < settings.rounds; round++) {
        for (const r of orderOf<BenchReceiver>(receivers, round)) {
          // With duplicates, retryproof's executor takes the work meanwhile, as on AWS: a sender's
          // retry after a lost answer comes after a worker took the work (Powertools completes
          // its record in the ingest itself). Its requests are the executor's, not the ingest's.
          const worker = w === 'c' ? cExecutors[r.name] : undefined;
          worker?.run(2);
          const isRetryproof = r.name === 'retryproof';
          const consumer = w === 'e' && r.name === 'powertools' ? cExecutors.powertools : undefined;
          const cpu0 = process.cpuUsage();
          // Profiled (BENCH_CPU_PROF_DIR): the sequential workloads, whose handler CPU is a goal; in e only the retries.
          const profiled = w === 'a' || w === 'e';
          if (w === 'a') await profiler.start();
          const result =
            w === 'e'
              ? await runRetries(r, {
                  deliveries: perRound,
                  bodyBytes: settings.retryBodyBytes,
                  settle: isRetryproof
                    ? () => stack.executor.drain(2, 120_000)
                    : consumer === undefined
                      ? undefined
                      : async () => {
                          metered.consumerUnits += await consumeRound(consumer, perRound);
                        },
                  phase: (name) => {
                    (isRetryproof ? meter : consumer === undefined ? undefined : ptMeter)?.phase(name);
                    if (name === 'retry') void profiler.start();
                  },
                })
              : await runLoad(r, {
                  deliveries: perRound,
                  concurrency: settings.concurrency[w],
                  bodyBytes: settings.bodyBytes,
                  duplicateShare: w === 'c' ? settings.duplicateShare : 0,
                  seed: 1000 + round,
                });
          const cpu = process.cpuUsage(cpu0);
          if (profiled) await profiler.stop(`ingest-${w}-${r.name}`);
          if (worker !== undefined) {
            const taken = await worker.stop();
            const sum = workloadCExecutor[r.name];
            sum.received += taken.received;
            sum.executed += new Set(worker.effects.map((e) => e.key)).size;
            sum.cpuMicros += taken.cpuMicros;
            sum.requests += taken.requests;
            for (const [op, n] of Object.entries(taken.byOperation)) sum.byOperation[op] = (sum.byOperation[op] ?? 0) + n;
          }
          if (w === 'e' && isRetryproof) {
            metered.first += perRound;
            metered.retry += result.deliveries;
          }
          if (consumer !== undefined) metered.powertools += perRound;
          const bucket = rounds.get(r.name);
          bucket?.results.push(result);
          if (bucket !== undefined) bucket.cpu += result.cpuMicros ?? cpu.user + cpu.system;
          log(`[${w}] round ${round + 1}/${settings.rounds} ${r.name.padEnd(10)} ${describeLoad(result)}`);
        }
      }
      if (meter !== undefined) {
        meter.stop();
        writeUnits = {
          newDeliveryLife: meter.writeUnits('first') / metered.first,
          duplicate: meter.writeUnits('retry') / metered.retry,
          deliveries: metered.first,
        };
      }
      if (ptMeter !== undefined) {
        ptMeter.stop();
        if (metered.powertools > 0) {
          powertoolsWriteUnits = {
            newDeliveryLife: (ptMeter.writeUnits('first') + metered.consumerUnits) / metered.powertools,
            deliveries: metered.powertools,
          };
        }
      }
      loads[w] = Object.fromEntries(
        receivers.map((r) => {
          const bucket = rounds.get(r.name);
          return [r.name, mergeLoads(bucket?.results ?? [], bucket?.cpu ?? 0)];
        }),
      ) as Record<ReceiverName, MergedLoad>;
    }
  } finally {
    await Promise.all(Object.values(cExecutors).map((e) => e.close()));
  }
  return { loads, writeUnits, powertoolsWriteUnits, workloadCExecutor };
}

/** The storm (d) and key reuse, for each receiver in turn. */
async function measureStorms(stack: BenchStack, settings: RunSettings, log: Log): Promise<Pick<Measurements, 'storm' | 'stormNotices' | 'keyReuse'>> {
  const receivers = stack.receivers;
  const storm = {} as Record<ReceiverName, StormResult>;
  const noticesBefore = receivers.find((r) => r.name === 'retryproof')?.notices?.() ?? 0;
  for (const r of receivers) {
    if (r.name === 'retryproof') {
      // Only the storm's messages should reach the executor: the earlier workloads' go unexecuted.
      await stack.purge(r.queueUrl);
    }
    log(`[d] storm ${r.name}: ${settings.storm.keys} keys x ${settings.storm.copies} copies`);
    const result = await runStorm(r, { ...settings.storm, bodyBytes: settings.bodyBytes }, r.name === 'retryproof' ? stack.executor : undefined);
    storm[r.name] = result;
    log(`[d] storm ${r.name.padEnd(10)} ${describeStorm(result)}`);
  }
  const stormNotices = (receivers.find((r) => r.name === 'retryproof')?.notices?.() ?? 0) - noticesBefore;

  const keyReuse = {} as Record<ReceiverName, KeyReuseResult>;
  for (const r of receivers) {
    const result = await runKeyReuse(r, settings.bodyBytes);
    keyReuse[r.name] = result;
    log(`[reuse] ${r.name.padEnd(10)} answers ${result.statuses.join(', ')}, effect ran ${result.executions} times`);
  }
  return { storm, stormNotices, keyReuse };
}

/** retryproof's executor against the Powertools SQS consumer, each in a process of its own. */
async function measureExecutors(services: BenchServices, stack: BenchStack, settings: RunSettings, log: Log): Promise<ExecutorMeasurements> {
  const receiver = stack.receivers.find((r) => r.name === 'retryproof');
  if (receiver === undefined) throw new Error('the bench stack has no retryproof receiver');
  // The earlier workloads' messages are not the executor benchmark's.
  await stack.purge(receiver.queueUrl);
  log(`executor against the Powertools SQS consumer: ${settings.executors.rounds} rounds, each executor in a process of its own`);
  return runExecutorBench(services, { receiver, tableName: stack.retryproofTable }, settings.executors, log);
}

/** Starts DynamoDB Local, fauxqs and the bench stack, warms the receivers named up, runs `measure`, and stops them all. */
async function onWarmStack<T>(
  settings: RunSettings,
  names: readonly ReceiverName[],
  log: Log,
  measure: (services: BenchServices, stack: BenchStack) => Promise<T>,
): Promise<T> {
  // The handlers read these when they build their Logger and Metrics.
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  log('starting DynamoDB Local and fauxqs');
  const services = await startBenchServices();
  try {
    const stack = await createBenchStack(services);
    try {
      log(`warming up: ${settings.warmup} deliveries per receiver`);
      for (const r of receiversNamed(stack, names)) await runLoad(r, { deliveries: settings.warmup, concurrency: 8, bodyBytes: settings.bodyBytes });
      return await measure(services, stack);
    } finally {
      stack.destroy();
    }
  } finally {
    await services.stop();
  }
}

/** Every measurement of the report. */
async function benchmark(settings: RunSettings, log: Log): Promise<Measurements> {
  const startedAt = new Date();
  const t0 = performance.now();
  const loadStart = loadavg();
  return onWarmStack(settings, RECEIVER_NAMES, log, async (services, stack) => {
    const { loads, writeUnits, powertoolsWriteUnits, workloadCExecutor } = await measureLoads(
      services,
      stack,
      settings,
      Object.keys(WORKLOADS) as LoadWorkload[],
      RECEIVER_NAMES,
      log,
    );
    const storms = await measureStorms(stack, settings, log);
    const executors = await measureExecutors(services, stack, settings, log);
    log(`bundling the three ingest functions and timing cold init (${settings.coldInitRuns} runs each)`);
    const bundles = await measureBundles({ runs: settings.coldInitRuns, log });
    return {
      settings,
      startedAt,
      durationMs: performance.now() - t0,
      loadAverage: { start: loadStart, end: loadavg() },
      loads,
      ...storms,
      bundles,
      writeUnits,
      powertoolsWriteUnits,
      executors,
      workloadCExecutor: workloadCExecutor satisfies Record<ReceiverName, WorkloadCExecutor>,
    };
  });
}

/**
 * Only what the JSON carries, measured as the report's run measures it: workloads a, b and e for
 * retryproof and Powertools, then the executor benchmark. No naive receiver, workload c, storm,
 * key reuse, bundles or cold init.
 */
async function benchmarkForJson(settings: RunSettings, log: Log): Promise<JsonMeasurements> {
  return onWarmStack(settings, JSON_PEERS, log, async (services, stack) => {
    const { loads, writeUnits, powertoolsWriteUnits } = await measureLoads(services, stack, settings, ['a', 'b', 'e'], JSON_PEERS, log);
    const executors = await measureExecutors(services, stack, settings, log);
    return { loads, writeUnits, powertoolsWriteUnits, executors };
  });
}

const USAGE = 'usage: npm run bench [-- [--quick] [--json]]';

/**
 * The bench's flags, with node:util's parseArgs: `--quick` for the smoke run's sizes, `--json`
 * for the figures as one JSON object on stdout (progress then goes to stderr).
 * @throws UsageError for an unknown flag, a value given to a switch, or an argument
 */
export function benchFlagsOf(argv: readonly string[]): { readonly quick: boolean; readonly json: boolean } {
  const options = { quick: { type: 'boolean' }, json: { type: 'boolean' } } as const;
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const flags = { quick: false, json: false };
  for (const token of tokens) {
    if (token.kind === 'positional') throw new UsageError(`unexpected argument ${JSON.stringify(token.value)}`);
    if (token.kind !== 'option') continue;
    if (token.name !== 'quick' && token.name !== 'json') throw new UsageError(`unknown flag ${token.rawName}`);
    if (token.value !== undefined) throw new UsageError(`${token.rawName} takes no value`);
    flags[token.name] = true;
  }
  return flags;
}

async function main(argv: readonly string[]): Promise<number> {
  let flags: { readonly quick: boolean; readonly json: boolean };
  try {
    flags = benchFlagsOf(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (Number(process.versions.node.split('.')[0]) < 24) {
    process.stderr.write(`error: node ${process.versions.node}: run it with "npm run bench" so the node@24 devDependency is used\n`);
    return 1;
  }
  // With --json, stdout carries the JSON object alone.
  const out = flags.json ? process.stderr : process.stdout;
  const log: Log = (line) => {
    out.write(`${line}\n`);
  };
  try {
    if (flags.quick && flags.json) {
      const t0 = performance.now();
      const measured = await benchmarkForJson(settingsFor(true), log);
      log(`measured in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      process.stdout.write(benchJsonText(benchJsonOf(measured)));
      return 0;
    }
    const measurements = await benchmark(settingsFor(flags.quick), log);
    const file = flags.quick ? resolve(ROOT, 'bench/.build/BENCHMARKS.quick.md') : resolve(ROOT, 'BENCHMARKS.md');
    // bench/.build is not in a fresh clone: the quick report must not fail on its folder.
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, renderReport(measurements));
    log(`wrote ${relative(ROOT, file)} after ${(measurements.durationMs / 1000).toFixed(0)} s`);
    if (flags.json) process.stdout.write(benchJsonText(benchJsonOf(measurements)));
    return 0;
  } catch (err) {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
