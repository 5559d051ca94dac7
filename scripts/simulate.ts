/**
 * `npm run simulate`: the deterministic simulation of the execution protocol (the real
 * ingest, executor, reconciler and route control on DynamoDB Local, with a simulated clock
 * and SQS), over many seeds. A failing seed is shrunk and printed with its schedule;
 * `--seed S` replays exactly that run.
 *
 *   npm run simulate -- --runs 2000
 *   npm run simulate -- --seed 29
 *   npm run simulate -- --runs 200 --save-shrunk /tmp/shrunk
 *   SIM_TRACE=1 npm run simulate -- --seed 29 --schedule /tmp/shrunk/seed-29.json
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { intFlag, numberFlag, parseFlags } from '../cli/args.ts';
import { EXIT, UsageError } from '../cli/errors.ts';
import { runScript } from '../cli/run-script.ts';

const USAGE = `usage: npm run simulate -- [options]

Runs seeded schedules of deliveries, duplicates, worker crashes, clock jumps, workers
stalled past their lease, pauses, resumes, DLQ redrives, SQS outages and reconciler runs
against the real protocol code, and checks its invariants after each. Needs Java 17+ (DynamoDB Local, started here).

  --runs N            how many seeds to run (default: 200)
  --from S            the first seed (default: 1)
  --seed S            replay one seed, and shrink it if it fails
  --length N          operations per schedule (default: 160)
  --shrink-seconds N  time spent shrinking a failure (default: 60)
  --skew-factor F     clocks off true time by up to F x the protocol's bound (default: 1);
                      above 1 the bound is broken and an invariant must break
  --regions N         receivers in N Regions (1 to 3) on one table, for every seed
                      (default: drawn per seed, 1 or 2)
  --consistency C     strong (default): one linearizable table, as MRSC gives; eventual: the
                      control, a table per Region replicated with a lag and last writer wins
                      (MREC), which must show double effects
  --concurrency N     runs at once (default: 3)
  --keep-going        do not stop at the first failing seed
  --save-shrunk DIR   write each failing seed's shrunk schedule to DIR/seed-S.json
  --schedule FILE     with --seed: run exactly the schedule in FILE (saved by --save-shrunk),
                      no shrinking; SIM_TRACE=1 prints every step of it on stderr
  --json              print the summary as JSON
  -h, --help          this text`;

const OPTIONS = {
  runs: { type: 'string' },
  from: { type: 'string' },
  seed: { type: 'string' },
  length: { type: 'string' },
  'shrink-seconds': { type: 'string' },
  'skew-factor': { type: 'string' },
  regions: { type: 'string' },
  consistency: { type: 'string' },
  concurrency: { type: 'string' },
  'keep-going': { type: 'boolean' },
  'save-shrunk': { type: 'string' },
  schedule: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** --consistency: strong or eventual, or absent. */
function consistencyFlag(value: string | undefined): 'strong' | 'eventual' | undefined {
  if (value === undefined || value === 'strong' || value === 'eventual') return value;
  throw new UsageError(`--consistency must be strong or eventual, not ${JSON.stringify(value)}`, USAGE);
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, OPTIONS, USAGE);
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const seed = intFlag('seed', values.seed, 0, 2 ** 31, USAGE);
  const runs = seed === undefined ? (intFlag('runs', values.runs, 1, 1_000_000, USAGE) ?? 200) : 1;
  const from = seed ?? intFlag('from', values.from, 0, 2 ** 31, USAGE) ?? 1;
  const length = intFlag('length', values.length, 1, 10_000, USAGE);
  const shrinkSeconds = intFlag('shrink-seconds', values['shrink-seconds'], 0, 3600, USAGE) ?? 60;
  const concurrency = intFlag('concurrency', values.concurrency, 1, 64, USAGE) ?? 3;
  const skewFactor = numberFlag('skew-factor', values['skew-factor'], 0, 100, USAGE) ?? 1;
  const regions = intFlag('regions', values.regions, 1, 3, USAGE);
  const consistency = consistencyFlag(values.consistency);
  if (consistency === 'eventual' && regions === 1) throw new UsageError('--consistency eventual needs several Regions: give --regions 2 or 3, or leave --regions out', USAGE);
  const world = { skewFactor, ...(regions === undefined ? {} : { regions }), ...(consistency === undefined ? {} : { consistency }) };
  if (values.schedule !== undefined && seed === undefined) throw new UsageError('--schedule needs --seed: the seed draws the run\'s world, the file its operations', USAGE);
  let schedule: string | undefined;
  if (values.schedule !== undefined) {
    try {
      schedule = await readFile(values.schedule, 'utf8');
    } catch (error) {
      throw new UsageError(`--schedule ${values.schedule}: ${(error as Error).message}`, USAGE);
    }
  }

  // The handlers log and emit metrics through Powertools: silent here, as in the tests.
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const { startLocalDynamo } = await import('../local/local-aws.ts');
  const { formatSchedule, parseSchedule, simulate } = await import('../test/simulation/run-simulation.ts');
  let ops: ReturnType<typeof parseSchedule> | undefined;
  if (schedule !== undefined) {
    try {
      ops = parseSchedule(schedule);
    } catch (error) {
      throw new UsageError(`--schedule ${String(values.schedule)}: ${(error as Error).message}`, USAGE);
    }
  }

  if (seed !== undefined) {
    // One seed: the shape it drew, in one block, before its run (on stderr: --json's stdout stays as it was).
    const { shapeBlockOf } = await import('../test/simulation/protocol-simulation.ts');
    process.stderr.write(`simulate: seed ${seed} draws\n${shapeBlockOf(seed, world).map((line) => `  ${line}\n`).join('')}`);
  }
  process.stderr.write(`simulate: starting DynamoDB Local\n`);
  const dynamo = await startLocalDynamo();
  // Stopped by a signal (Ctrl-C, a kill, a CI timeout): the JVM goes with the run, not orphaned.
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
    process.once(signal, () => {
      process.stderr.write(`simulate: ${signal}, stopping DynamoDB Local\n`);
      dynamo.killNow();
      process.exit(code);
    });
  }
  try {
    if (ops !== undefined && seed !== undefined) {
      const { runSchedule } = await import('../test/simulation/protocol-simulation.ts');
      const result = await runSchedule({ endpoint: dynamo.endpoint }, seed, ops, world);
      if (values.json === true) {
        process.stdout.write(`${JSON.stringify({ seed, operations: ops.length, violations: result.violations, stats: result.stats }, null, 2)}\n`);
      } else {
        process.stdout.write(`seed ${seed}, ${ops.length} operations from ${String(values.schedule)}: violations ${result.violations.length}\n`);
        for (const v of result.violations) process.stdout.write(`  ${v}\n`);
      }
      return result.violations.length === 0 ? EXIT.ok : EXIT.failed;
    }
    const started = Date.now();
    const every = Math.max(1, Math.min(50, Math.floor(runs / 20)));
    const summary = await simulate({
      env: { endpoint: dynamo.endpoint },
      concurrency,
      ...world,
      firstSeed: from,
      runs,
      ...(length === undefined ? {} : { length }),
      shrinkBudgetMs: shrinkSeconds * 1000,
      stopAtFirstFailure: values['keep-going'] !== true,
      // A failing seed is named at once: a long run's failures can be looked at while it goes on.
      onFailure: (seed, found) => process.stderr.write(`simulate: seed ${seed} failed (${found.length} violations): ${found[0] ?? ''}\n`),
      onProgress: (done, failures) => {
        if (done % every === 0 || done === runs) {
          process.stderr.write(`simulate: ${done}/${runs} runs, ${failures} failing, ${Math.round((Date.now() - started) / 1000)} s\n`);
        }
      },
    });
    const t = summary.totals;
    const violations = summary.failures.reduce((n, f) => n + f.violations.length, 0);
    const seedsPerSecond = summary.runs / Math.max(0.001, summary.durationMs / 1000);
    if (values['save-shrunk'] !== undefined && summary.failures.length > 0) {
      await mkdir(values['save-shrunk'], { recursive: true });
      for (const f of summary.failures) await writeFile(join(values['save-shrunk'], `seed-${f.seed}.json`), `${JSON.stringify(f.shrunk)}\n`);
    }
    if (values.json === true) {
      // The figures of the text line at the top level, under stable names (tools read them).
      const figures = {
        runs: summary.runs,
        violations,
        ambiguousWrites: t.ambiguousWrites,
        throttles: t.throttles,
        slowAnswers: t.slowAnswers,
        slowLeases: t.slowLeases,
        cutsAfterPost: t.cutsAfterPost,
        lateRedrives: t.lateRedrives,
        takeoverEdges: t.edges,
        sqsDuplicates: t.sqsDuplicates,
        concurrentDeliveries: t.concurrentDeliveries,
        unseenReceives: t.unseenReceives,
        partialBatches: t.partialBatches,
        maxClockSkewMs: t.maxClockSkewMs,
        horizonDays: Number(t.horizonDays.toFixed(2)),
        replays: t.replays,
        ledgerApartFromEffect: t.ledgerApartFromEffect,
        multiRegionRuns: t.multiRegionRuns,
        crossRegionCopies: t.crossRegionCopies,
        replicatedConflicts: t.replicatedConflicts,
        isolations: t.isolations,
        replicatedWrites: t.replicatedWrites,
        rateLimitedRuns: t.rateLimitedRuns,
        ownQueueRuns: t.ownQueueRuns,
        rateAdmissions: t.rateAdmissions,
        rateDeferrals: t.rateDeferrals,
        rateSlotsMissed: t.rateSlotsMissed,
        claimCheckAllRuns: t.claimCheckAllRuns,
        bodyObjectsStored: t.bodyObjectsStored,
        bodyReads: t.bodyReads,
        bodyRenewals: t.bodyRenewals,
        bodyFaults: t.bodyFaults,
        bodyReadsPastTtl: t.bodyReadsPastTtl,
        oldestBodyReadDays: Number(t.oldestBodyReadDays.toFixed(2)),
        shortTtlRuns: t.shortTtlRuns,
        deployedShardRuns: t.deployedShardRuns,
        orderedRuns: t.orderedRuns,
        linesChecked: t.linesChecked,
        orderedPairs: t.orderedPairs,
        waitingTurns: t.waitingTurns,
        longPauses: t.longPauses,
        killedBeforePlace: t.killedBeforePlace,
        breakerTrips: t.breakerTrips,
        refusedCharErrors: t.refusedCharErrors,
        doubleEffects: t.doubleEffects,
        doubleCompletions: t.doubleCompletions,
        doubleClaims: t.doubleClaims,
        reconcilerNotDue: t.reconcilerNotDue,
        sweptItems: t.sweptItems,
        consistency: consistency ?? 'strong',
        skewFactor,
        seedsPerSecond: Number(seedsPerSecond.toFixed(3)),
      };
      process.stdout.write(`${JSON.stringify({ ...summary, ...figures }, null, 2)}\n`);
    } else {
      process.stdout.write(
        `runs ${summary.runs} (seeds ${from}..${from + summary.runs - 1}), steps ${t.steps}, deliveries ${t.deliveries}, ` +
          `executions ${t.executions}, crashes injected ${t.crashes} (+${t.timeouts} Lambda timeouts), redrives ${t.redrives}, ` +
          `reconciler runs ${t.reconcilerRuns} (${t.reconcilerResumes} resumed an unfinished window, ${t.reconcilerSkips} found it held), pauses ${t.pauses} (breaker trips ${t.breakerTrips}), resumes ${t.resumes}, bulk redrives ${t.bulkRedrives} (${t.bulkRedriven} records taken back), runs with a rate-limited route ${t.rateLimitedRuns} (${t.ownQueueRuns} on a queue of its own; ${t.rateAdmissions} runs admitted, ${t.rateDeferrals} deferred, ${t.rateSlotsMissed} slots given up), large bodies through the bucket ${t.bodyObjectsStored} (runs sending every body there ${t.claimCheckAllRuns}; reads by workers ${t.bodyReads}, renewals ${t.bodyRenewals}, S3 failures met ${t.bodyFaults}; reads of an object last written longer ago than the longest TTL ${t.bodyReadsPastTtl}, the oldest ${t.oldestBodyReadDays.toFixed(1)} days; runs with the shortest TTL the cover allows ${t.shortTtlRuns}), runs with a deployment's 8 byTime partitions an hour ${t.deployedShardRuns}, runs with a route ordered per entity ${t.orderedRuns} (${t.linesChecked} lines with two records or more that ran, ${t.orderedPairs} pairs checked for order, ${t.waitingTurns} records parked to wait for their turn, ${t.longPauses} paused from start to settle, ${t.killedBeforePlace} ingests killed between their send and their place), action errors holding a character SQS refuses ${t.refusedCharErrors}, SQS outages ${t.outages}, ` +
          `clock jumps ${t.clockJumps}, stalls past a lease ${t.stalls}, ` +
          `ambiguous writes ${t.ambiguousWrites}, throttles ${t.throttles}, slow answers ${t.slowAnswers}, takeover edges ${t.edges}, lease writes answered late on purpose ${t.slowLeases}, workers killed between a ledger post and its effect ${t.cutsAfterPost}, redrives on a copy's last day ${t.lateRedrives}, SQS duplicates ${t.sqsDuplicates}, ` +
          `concurrent deliveries ${t.concurrentDeliveries}, unseen receives ${t.unseenReceives}, partial batches ${t.partialBatches}, ` +
          `largest clock skew ${t.maxClockSkewMs} ms (skew factor ${skewFactor}), longest horizon ${t.horizonDays.toFixed(1)} days, ` +
          `replays ${t.replays}, ledger posts apart from effects ${t.ledgerApartFromEffect}, ` +
          `TTL deletions ${t.ttlDeletions}, padded key headers ${t.paddedKeyHeaders}, re-signed retries ${t.resignedRetries}, ` +
          `bodies at a size limit ${t.bodiesAtLimits} (${t.refusedTooLarge} answered 413), ` +
          `runs in several Regions ${t.multiRegionRuns} (${consistency ?? 'strong'} consistency; copies in another Region than the first ${t.crossRegionCopies}, ` +
          `replicated-write conflicts ${t.replicatedConflicts}, reconciler runs not due ${t.reconcilerNotDue}, expired items swept ${t.sweptItems}, Regions isolated ${t.isolations}, writes replicated ${t.replicatedWrites}), keys with double effects ${t.doubleEffects}, generations completed twice ${t.doubleCompletions}, keys claimed in two Regions at once ${t.doubleClaims}; ` +
          `violations ${violations}; ${Math.round(summary.durationMs / 1000)} s (${seedsPerSecond.toFixed(2)} seeds/s)\n`,
      );
      for (const f of summary.failures) {
        process.stdout.write(
          `\nFAILED seed ${f.seed}: ${f.violations.join('; ')}\n` +
            `shrunk to ${f.shrunk.length} of ${f.originalLength} operations: ${f.shrunkViolations.join('; ')}\n` +
            `${formatSchedule(f.shrunk)}\n` +
            `replay: npm run simulate -- --seed ${f.seed}` +
            (values['save-shrunk'] === undefined ? '\n' : `; its shrunk schedule: npm run simulate -- --seed ${f.seed} --schedule ${join(values['save-shrunk'], `seed-${f.seed}.json`)}\n`),
        );
      }
    }
    return summary.failures.length === 0 ? EXIT.ok : EXIT.failed;
  } finally {
    await dynamo.stop();
  }
}

await runScript('simulate', USAGE, main);
