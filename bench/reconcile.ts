/**
 * The reconciler at a day's scale, on DynamoDB Local (loopback only): fills a window of N
 * records (bench/reconcile-data.ts says which are stuck, duplicated or missing an effect),
 * then runs the real reconciler over it, scheduled run after scheduled run through its
 * cursor, each within a time budget, until the window is done.
 *
 *   npm run bench:reconcile -- --records 300000          # a few minutes on two cores
 *   npm run bench:reconcile -- --records 1000000 --json
 *
 * The budget is the deployed one (the function's timeout less its reserve,
 * lambdas/reconciler/reconciler-budget.ts), scaled down by default so that the window takes
 * several runs: what is shown is that a window larger than one run is finished by the next
 * runs, every stuck record re-enqueued exactly once. `--budget-s` sets it. The reconciler runs
 * bundled, in a process of its own whose V8 heap is bounded as in the function (`--heap-mb`),
 * so its peak RSS is the reconciler's alone.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_BUILD } from './bundles.ts';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEPLOYED_BUDGET_MS, RECONCILER_NODE_OPTIONS, RECONCILER_TIMEOUT_SECONDS } from '../lambdas/reconciler/reconciler-budget.ts';
import { documentClient } from '../lambdas/store/dynamodb-event-store.ts';
import { createEventsTable, createLedgerTable, localDynamoClient } from '../local/aws-clients.ts';
import { startLocalDynamo } from '../local/local-aws.ts';
import { parseFlags, UsageError } from './flags.ts';
import { entryItemsOf, expectedOf, isStuck, keyOf, planOf, recordItemOf } from './reconcile-data.ts';
import type { PeerResult, RunnerResult, RunnerSettings } from './reconcile-runner.ts';

const USAGE = `usage: npm run bench:reconcile -- [--records N] [--budget-s S] [--heap-mb H] [--semi-space-mb Y] [--writers W] [--json]

  --records N    records in the window (default 300,000)
  --budget-s S   each run's time budget (default: the deployed ${DEPLOYED_BUDGET_MS / 1000} s, scaled down to
                 records / 10,000 s, at least 10 s, so that the window takes several runs)
  --heap-mb H    the reconciler process's --max-old-space-size (default: the deployed function's
                 NODE_OPTIONS, ${RECONCILER_NODE_OPTIONS}; 0 for Node's default)
  --semi-space-mb Y  its --max-semi-space-size (default: the deployed one; 0 for Node's default)
  --writers W    parallel BatchWriteItem calls while filling (default: measured, the fastest of 8, 16, 32)
  --json         print { records, seconds, peakRssMb, runs, reenqueued, missed, handledTwice }`;

/** The deployed function's memory (lib/webhook-receiver.ts): the bound the peak RSS is held to. */
const FUNCTION_MEMORY_MB = 512;
const BATCH = 25;

function log(line: string): void {
  process.stderr.write(`bench:reconcile: ${line}\n`);
}

/** Writes items with `writers` parallel BatchWriteItem calls, retrying what DynamoDB leaves unprocessed. */
async function writeAll(doc: DynamoDBDocumentClient, table: string, batches: () => Record<string, unknown>[] | undefined, writers: number): Promise<number> {
  let written = 0;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      for (let batch = batches(); batch !== undefined; batch = batches()) {
        let pending = batch.map((Item) => ({ PutRequest: { Item } }));
        while (pending.length > 0) {
          const out = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
          pending = (out.UnprocessedItems?.[table] ?? []) as typeof pending;
        }
        written += batch.length;
      }
    }),
  );
  return written;
}

/**
 * The runner bundled as lib/stateless/retryproof-function.ts bundles a function (esbuild, ESM,
 * platform node, target node24, module before main, a createRequire banner): the process then
 * holds what the deployed function holds, not Node's type stripping of these .ts files.
 */
async function bundleRunner(): Promise<string> {
  const outfile = join(import.meta.dirname, '.build', 'reconcile-runner.mjs');
  await build({
    entryPoints: [join(import.meta.dirname, 'reconcile-runner.ts')],
    outfile,
    ...LAMBDA_BUILD,
    // Source maps, read at load as the function's NODE_OPTIONS (--enable-source-maps) has them read.
    sourcemap: true,
    logLevel: 'error',
  });
  return outfile;
}

/** Runs the runner and reads the one JSON line it prints. */
function child<T>(runner: string, args: string[], nodeFlags: string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeFlags, runner, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out) as T);
      else reject(new Error(`reconcile-runner exited with code ${String(code)}`));
    });
  });
}

async function main(argv: readonly string[]): Promise<void> {
  const flags = parseFlags(argv, { records: 'number', 'budget-s': 'number', 'heap-mb': 'number', 'semi-space-mb': 'number', writers: 'number', json: 'switch' });
  const records = flags.numbers.get('records') ?? 300_000;
  if (!Number.isInteger(records) || records < 1_000) throw new UsageError('--records must be a whole number of at least 1,000');
  const budgetS = flags.numbers.get('budget-s') ?? Math.min(DEPLOYED_BUDGET_MS / 1000, Math.max(10, Math.round(records / 10_000)));
  if (!(budgetS > 0)) throw new UsageError('--budget-s must be above 0');
  const json = flags.switches.has('json');
  // The deployed function's NODE_OPTIONS, unless a flag sets one of its V8 sizes (0: Node's default).
  const heapMb = flags.numbers.get('heap-mb');
  const semiSpaceMb = flags.numbers.get('semi-space-mb');
  const v8Flags = RECONCILER_NODE_OPTIONS.split(' ').flatMap((flag) => {
    const [name] = flag.split('=');
    const value = name === '--max-old-space-size' ? heapMb : name === '--max-semi-space-size' ? semiSpaceMb : undefined;
    if (value === undefined) return [flag];
    return value > 0 ? [`${name ?? ''}=${value}`] : [];
  });

  // The JIT's full optimiser and a heap that holds the table: the fill is long, start-up time does not count.
  const userOptions = process.env.JAVA_TOOL_OPTIONS;
  process.env.JAVA_TOOL_OPTIONS ??= '-XX:+UseParallelGC -Xms1g';
  const dynamoLocal = await startLocalDynamo();
  if (userOptions === undefined) delete process.env.JAVA_TOOL_OPTIONS;
  try {
    const client = localDynamoClient(dynamoLocal.endpoint);
    const doc = documentClient(client);
    const eventsTable = await createEventsTable(client, 'bench-events');
    const ledgerTable = await createLedgerTable(client, 'bench-ledger');
    const t0 = Date.now();
    const expected = expectedOf(records);

    // Fill: the records, then the ledger entries, in batches of 25 made as they are written.
    let next = 0;
    const recordBatches = (limit: number) => (): Record<string, unknown>[] | undefined => {
      if (next >= limit) return undefined;
      const batch: Record<string, unknown>[] = [];
      for (const end = Math.min(next + BATCH, limit); next < end; next++) batch.push(recordItemOf(planOf(next, records, t0)));
      return batch;
    };
    const fillStarted = performance.now();
    let writers = flags.numbers.get('writers');
    if (writers === undefined) {
      // Measure the fill rate early: a slice at each concurrency, then the rest at the fastest.
      let best = { writers: 8, rate: 0 };
      for (const w of [8, 16, 32]) {
        const slice = Math.min(records, next + Math.max(2_000, Math.floor(records / 60)));
        const t = performance.now();
        const n = await writeAll(doc, eventsTable, recordBatches(slice), w);
        const rate = n / ((performance.now() - t) / 1000);
        log(`fill: ${w} writers, ${rate.toFixed(0)} items/s`);
        if (rate > best.rate) best = { writers: w, rate };
      }
      writers = best.writers;
    }
    log(`fill: ${writers} writers for the rest`);
    const progress = setInterval(() => {
      const s = (performance.now() - fillStarted) / 1000;
      log(`fill: ${next} / ${records} records, ${(next / s).toFixed(0)} a second`);
    }, 10_000);
    await writeAll(doc, eventsTable, recordBatches(records), writers);
    let entryRecord = 0;
    await writeAll(
      doc,
      ledgerTable,
      () => {
        const batch: Record<string, unknown>[] = [];
        while (entryRecord < records && batch.length < BATCH - 1) batch.push(...entryItemsOf(planOf(entryRecord++, records, t0)));
        return batch.length === 0 ? undefined : batch;
      },
      writers,
    );
    clearInterval(progress);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    log(`fill: ${records} records and ${expected.entries} ledger entries in ${fillSeconds.toFixed(0)} s`);
    client.destroy();

    // Reconcile, in a process of its own: its peak RSS is the reconciler's alone.
    const settings: RunnerSettings = { endpoint: dynamoLocal.endpoint, eventsTable, ledgerTable, budgetMs: budgetS * 1000, maxRuns: 500 };
    const runner = await bundleRunner();
    const result = await child<RunnerResult>(runner, [JSON.stringify(settings)], v8Flags);
    const peer = await child<PeerResult>(runner, ['--peer'], ['--expose-gc']);

    const sent = new Map(result.sends);
    let missed = 0;
    let handledTwice = 0;
    let stuck = 0;
    for (let i = 0; i < records; i++) {
      if (!isStuck(i)) continue;
      stuck++;
      const times = sent.get(`${planOf(i, records, t0).route}/${keyOf(i)}`) ?? 0;
      if (times === 0) missed++;
      if (times > 1) handledTwice++;
    }
    const strays = result.sends.filter(([k]) => !/\/evt_/.test(k) || !isStuck(parseInt(k.slice(k.indexOf('/evt_') + 5), 36))).length;
    const summary = {
      records,
      seconds: Math.round(result.seconds * 10) / 10,
      peakRssMb: Math.round(result.peakRssMb),
      runs: result.runs,
      reenqueued: result.totals.reenqueued,
      missed,
      handledTwice,
    };
    if (json) {
      process.stdout.write(`${JSON.stringify(summary)}\n`);
      return;
    }
    const rate = records / result.seconds;
    const deployedRuns = Math.ceil(result.seconds / (DEPLOYED_BUDGET_MS / 1000));
    const lines = [
      `window: ${records.toLocaleString('en')} records over 22 h, ${expected.entries.toLocaleString('en')} ledger entries; filled in ${fillSeconds.toFixed(0)} s (${writers} writers)`,
      `reconciler process: ${v8Flags.join(' ')}; budget per run: ${budgetS} s (deployed: ${DEPLOYED_BUDGET_MS / 1000} s, the ${RECONCILER_TIMEOUT_SECONDS} s timeout less the report's reserve)`,
      '',
      '                      retryproof (streaming, cursor)                the old reconciler',
      `records per second    ${rate.toFixed(0).padEnd(46)}-`,
      `peak RSS              ${`${summary.peakRssMb} MB (heap at most ${result.heapPeakMb.toFixed(0)} MB)`.padEnd(46)}bound ${FUNCTION_MEMORY_MB} MB; its Map alone ~${((peer.mapBytesPerRecord * records) / 1024 / 1024).toFixed(0)} MB (${peer.mapBytesPerRecord} B a record)`,
      `runs                  ${`${result.runs} of ${budgetS} s (${result.finished ? 'window done' : 'NOT done'}); ~${deployedRuns} of ${DEPLOYED_BUDGET_MS / 1000} s`.padEnd(46)}throws at ${peer.spreadLimit.toLocaleString('en')} ledger groups (Math.min spread)`,
      `re-enqueued           ${`${summary.reenqueued} of ${stuck} stuck`.padEnd(46)}-`,
      `missed, handledTwice  ${`${missed}, ${handledTwice}${strays > 0 ? ` (and ${strays} sends of records not stuck)` : ''}`.padEnd(46)}-`,
      `reversed, missing     ${`${result.totals.reversed} of ${expected.reversed}, ${result.totals.missing} of ${expected.missing}`.padEnd(46)}-`,
      '',
      'runs:',
      ...result.perRun.map((r, i) => `  ${String(i + 1).padStart(3)}  ${r.seconds.toFixed(1).padStart(6)} s  ${String(r.scanned).padStart(8)} records  ${String(r.reenqueued).padStart(5)} re-enqueued  ${r.startedFrom} -> ${r.stoppedAt}`),
    ];
    lines.push(
      `at the RSS peak: V8 heap ${result.atPeak.heapTotal.toFixed(0)} MB, external ${result.atPeak.external.toFixed(0)} MB (array buffers ${result.atPeak.arrayBuffers.toFixed(0)} MB); sampled RSS ${result.sampledRssMb.toFixed(0)} MB; before the first run ${result.baselineRssMb.toFixed(0)} MB (Node and the bundle)`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
    if (missed > 0 || handledTwice > 0 || strays > 0 || !result.finished) process.exitCode = 1;
  } finally {
    await dynamoLocal.stop();
  }
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`${err.message}\n\n${USAGE}\n`);
  process.exitCode = 2;
}
