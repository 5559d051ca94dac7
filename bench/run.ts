/**
 * The benchmark: retryproof, Powertools idempotency and the naive check-then-act, side by
 * side on DynamoDB Local and fauxqs, in one run, on the same data; then retryproof's executor
 * against a Powertools SQS consumer, each in a process of its own. Writes BENCHMARKS.md.
 *
 *   npm run bench               # the full run, about 3 to 5 minutes; writes BENCHMARKS.md
 *   npm run bench -- --quick    # a smoke run under 30 s; writes bench/.build/BENCHMARKS.quick.md
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, relative, resolve } from 'node:path';
import { measureBundles } from './bundles.ts';
import { ExecutorProcess, runExecutorBench } from './executor-bench.ts';
import { parseFlags, UsageError } from './flags.ts';
import { localDynamoClient } from '../local/aws-clients.ts';
import { startBenchServices } from './local-services.ts';
import { mergeLoads, WORKLOADS } from './measurements.ts';
import type { LoadWorkload, Measurements, MergedLoad, RunSettings, WorkloadCExecutor } from './measurements.ts';
import type { ReceiverName } from './receivers/receiver.ts';
import { renderReport } from './report.ts';
import { createBenchStack } from './stack.ts';
import type { BenchReceiver } from './stack.ts';
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

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

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

async function benchmark(settings: RunSettings): Promise<Measurements> {
  const startedAt = new Date();
  const t0 = performance.now();
  const loadStart = loadavg();
  // The handlers read these when they build their Logger and Metrics.
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';

  log('starting DynamoDB Local and fauxqs');
  const services = await startBenchServices();
  const stack = await createBenchStack(services);
  try {
    const receivers = stack.receivers;
    const retryproofReceiver = receivers.find((r) => r.name === 'retryproof');
    if (retryproofReceiver === undefined) throw new Error('the bench stack has no retryproof receiver');
    const retryproofQueue = retryproofReceiver.queueUrl;
    log(`warming up: ${settings.warmup} deliveries per receiver`);
    for (const r of receivers) await runLoad(r, { deliveries: settings.warmup, concurrency: 8, bodyBytes: settings.bodyBytes });

    const loads = {} as Record<LoadWorkload, Record<ReceiverName, MergedLoad>>;
    let writeUnits: Measurements['writeUnits'];
    // In c every receiver's queue is drained while it is measured, each by an executor in a process
    // of its own: retryproof's by its executor, the peers' by the Powertools SQS consumer on a table
    // of its own. So each pays the same kind of competition for the cores, and no executor's CPU or
    // requests are counted with any receiver's.
    const admin = localDynamoClient(services.dynamo);
    const consumerTables = {
      powertools: await createPowertoolsTable(admin, `bench-c-${randomUUID().slice(0, 8)}-powertools-consumer`),
      naive: await createPowertoolsTable(admin, `bench-c-${randomUUID().slice(0, 8)}-naive-consumer`),
    };
    admin.destroy();
    const cExecutors = Object.fromEntries(
      await Promise.all(
        receivers.map(async (r) => [
          r.name,
          await ExecutorProcess.start({
            executor: r.name === 'retryproof' ? 'retryproof' : 'powertools',
            dynamo: services.dynamo,
            sqs: services.sqs,
            tableName: r.name === 'retryproof' ? stack.retryproofTable : consumerTables[r.name],
            queueUrl: r.queueUrl,
            idleMs: 20,
          }),
        ]),
      ),
    ) as Record<ReceiverName, ExecutorProcess>;
    const workloadCExecutor = Object.fromEntries(
      receivers.map((r) => [r.name, { received: 0, executed: 0, cpuMicros: 0, requests: 0, byOperation: {} }]),
    ) as Record<ReceiverName, { received: number; executed: number; cpuMicros: number; requests: number; byOperation: Record<string, number> }>;
    for (const w of Object.keys(WORKLOADS) as LoadWorkload[]) {
      if (w === 'c' || w === 'e') {
        // The earlier workloads' messages are never executed here: an executor busy with that
        // backlog would leave the work of c and e untaken, as no deployment's would be.
        for (const r of receivers) await stack.purge(r.queueUrl);
      }
      const meter = w === 'e' ? stack.meterRetryproofWrites() : undefined;
      const metered = { first: 0, retry: 0 };
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
          const cpu0 = process.cpuUsage();
          const result =
            w === 'e'
              ? await runRetries(r, {
                  deliveries: perRound,
                  bodyBytes: settings.retryBodyBytes,
                  settle: isRetryproof ? () => stack.executor.drain(2, 120_000) : undefined,
                  phase: isRetryproof ? (name) => meter?.phase(name) : undefined,
                })
              : await runLoad(r, {
                  deliveries: perRound,
                  concurrency: settings.concurrency[w],
                  bodyBytes: settings.bodyBytes,
                  duplicateShare: w === 'c' ? settings.duplicateShare : 0,
                  seed: 1000 + round,
                });
          const cpu = process.cpuUsage(cpu0);
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
      loads[w] = Object.fromEntries(
        receivers.map((r) => {
          const bucket = rounds.get(r.name);
          return [r.name, mergeLoads(bucket?.results ?? [], bucket?.cpu ?? 0)];
        }),
      ) as Record<ReceiverName, MergedLoad>;
    }

    await Promise.all(receivers.map((r) => cExecutors[r.name].close()));

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

    // The storm's and key reuse's messages are not the executor benchmark's.
    await stack.purge(retryproofQueue);
    log(`executor against the Powertools SQS consumer: ${settings.executors.rounds} rounds, each executor in a process of its own`);
    const executors = await runExecutorBench(services, { receiver: retryproofReceiver, tableName: stack.retryproofTable }, settings.executors, log);

    log(`bundling the three ingest functions and timing cold init (${settings.coldInitRuns} runs each)`);
    const bundles = await measureBundles({ runs: settings.coldInitRuns, log });
    return {
      settings,
      startedAt,
      durationMs: performance.now() - t0,
      loadAverage: { start: loadStart, end: loadavg() },
      loads,
      storm,
      stormNotices,
      keyReuse,
      bundles,
      writeUnits,
      executors,
      workloadCExecutor: workloadCExecutor satisfies Record<ReceiverName, WorkloadCExecutor>,
    };
  } finally {
    stack.destroy();
    await services.stop();
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let quick: boolean;
  try {
    quick = parseFlags(argv, { quick: 'switch' }).switches.has('quick');
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n\nusage: npm run bench [-- --quick]\n`);
    return 2;
  }
  if (Number(process.versions.node.split('.')[0]) < 24) {
    process.stderr.write(`error: node ${process.versions.node}: run it with "npm run bench" so the node@24 devDependency is used\n`);
    return 1;
  }
  try {
    const measurements = await benchmark(settingsFor(quick));
    const out = quick ? resolve(ROOT, 'bench/.build/BENCHMARKS.quick.md') : resolve(ROOT, 'BENCHMARKS.md');
    // bench/.build is not in a fresh clone: the quick report must not fail on its folder.
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, renderReport(measurements));
    log(`wrote ${relative(ROOT, out)} after ${(measurements.durationMs / 1000).toFixed(0)} s`);
    return 0;
  } catch (err) {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
