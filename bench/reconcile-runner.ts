/**
 * The reconciler's side of `npm run bench:reconcile`, in a process of its own so that its
 * peak RSS is the reconciler's, not the filler's: scheduled runs through the real composition
 * root (createReconciler: the DynamoDB store, the cursor, the demo ledger) until the window is
 * done, with a WorkQueue that counts what each record was sent.
 *
 * bench/reconcile.ts bundles it first (bench/.build/reconcile-runner.mjs), then:
 *   node reconcile-runner.mjs '<json settings>'          prints one JSON result line
 *   node --expose-gc reconcile-runner.mjs --peer         the old approach's figures, measured
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { demoLedgers } from '../lambdas/demo/dynamodb-ledger.ts';
import type { WorkMessage } from '../lambdas/domain/event-record.ts';
import { createReconciler } from '../lambdas/reconciler/create-reconciler.ts';
import type { ReconcileReport } from '../lambdas/reconciler/reconcile.ts';
import { benchConfig } from './reconcile-data.ts';

export interface RunnerSettings {
  readonly endpoint: string;
  readonly eventsTable: string;
  readonly ledgerTable: string;
  readonly budgetMs: number;
  /** Stop after this many runs, finished or not. */
  readonly maxRuns: number;
}

export interface RunnerResult {
  readonly runs: number;
  readonly seconds: number;
  /** process.resourceUsage().maxRSS, the kernel's high-water mark. */
  readonly peakRssMb: number;
  /** The largest of the RSS samples taken every 100 ms: a cross-check of the above. */
  readonly sampledRssMb: number;
  readonly heapPeakMb: number;
  /** RSS before the first run: the process with its modules loaded. */
  readonly baselineRssMb: number;
  /** What V8 held when the RSS sample peaked, MB. */
  readonly atPeak: { heapTotal: number; external: number; arrayBuffers: number };
  readonly finished: boolean;
  readonly totals: { scanned: number; reenqueued: number; reversed: number; missing: number; orphans: number; failed: number; needsAttention: number };
  readonly perRun: { seconds: number; scanned: number; reenqueued: number; startedFrom: string; stoppedAt: string }[];
  /** Each key sent, with how many times. */
  readonly sends: [string, number][];
  readonly findings: string[];
}

export interface PeerResult {
  /** The smallest array Math.min(...array) throws RangeError on, here. */
  readonly spreadLimit: number;
  /** Heap bytes per record of the old Map of summaries, measured on 100,000. */
  readonly mapBytesPerRecord: number;
}

const MB = 1024 * 1024;

function where(p: ReconcileReport['stoppedAt']): string {
  if (p === undefined) return 'done';
  if (p.phase === 'window') return `window ${p.bucket}#${p.shard}${p.after === undefined ? '' : ` after ${p.after.key}`}`;
  if (p.phase === 'parked' || p.phase === 'stranded') return `${p.phase} ${p.route}`;
  return p.phase;
}

async function run(settings: RunnerSettings): Promise<RunnerResult> {
  // Node and the bundle, before any work: what the function holds once its INIT phase is over.
  const baselineRssMb = process.memoryUsage().rss / MB;
  let sampledRss = 0;
  let heapPeak = 0;
  let atPeak = { heapTotal: 0, external: 0, arrayBuffers: 0 };
  const sample = (): void => {
    const m = process.memoryUsage();
    if (m.rss > sampledRss) atPeak = { heapTotal: m.heapTotal / MB, external: m.external / MB, arrayBuffers: m.arrayBuffers / MB };
    sampledRss = Math.max(sampledRss, m.rss);
    heapPeak = Math.max(heapPeak, m.heapUsed);
  };
  const sampler = setInterval(sample, 100);
  const sends = new Map<string, number>();
  const queue = {
    send: (m: WorkMessage): Promise<void> => {
      const k = `${m.route}/${m.key}`;
      sends.set(k, (sends.get(k) ?? 0) + 1);
      return Promise.resolve();
    },
  };
  // DynamoDB Local on loopback, with the fake credentials it accepts (local/aws-clients.ts makes the same,
  // but its module brings the emulators along, which a bundle of the function would not hold).
  const dynamo = new DynamoDBClient({ endpoint: settings.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const reconciler = createReconciler({
    dynamo,
    eventsTable: settings.eventsTable,
    ledgers: demoLedgers(dynamo, settings.ledgerTable),
    queue,
    config: benchConfig(),
  });
  const totals = { scanned: 0, reenqueued: 0, reversed: 0, missing: 0, orphans: 0, failed: 0, needsAttention: 0 };
  const perRun: RunnerResult['perRun'] = [];
  const findings: string[] = [];
  const started = performance.now();
  let finished = false;
  while (perRun.length < settings.maxRuns && !finished) {
    const t = performance.now();
    const report = await reconciler.run({ budgetMs: settings.budgetMs });
    if (report.skipped !== undefined) throw new Error(`a run found the cursor held by ${report.skipped.holder}`);
    for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += report.counts[k];
    for (const f of report.needsAttention) if (f.finding !== 'failed') findings.push(`${f.finding} ${f.route}/${f.key}`);
    finished = !report.stoppedEarly;
    const line = {
      seconds: (performance.now() - t) / 1000,
      scanned: report.counts.scanned,
      reenqueued: report.counts.reenqueued,
      startedFrom: report.startedFrom === undefined ? 'start' : where(report.startedFrom),
      stoppedAt: where(report.stoppedAt),
    };
    perRun.push(line);
    sample();
    process.stderr.write(
      `bench:reconcile: run ${perRun.length}: ${line.seconds.toFixed(1)} s, ${line.scanned} records, ${line.reenqueued} re-enqueued, ` +
        `from ${line.startedFrom} to ${line.stoppedAt}, rss ${(process.memoryUsage().rss / MB).toFixed(0)} MB\n`,
    );
  }
  clearInterval(sampler);
  dynamo.destroy();
  return {
    runs: perRun.length,
    seconds: (performance.now() - started) / 1000,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    sampledRssMb: sampledRss / MB,
    heapPeakMb: heapPeak / MB,
    baselineRssMb,
    atPeak,
    finished,
    totals,
    perRun,
    sends: [...sends],
    findings,
  };
}

/** The old reconciler's two limits, measured in this Node: the spread's and the Map's. */
function peer(): PeerResult {
  const throws = (n: number): boolean => {
    try {
      Math.min(...new Array<number>(n).fill(1));
      return false;
    } catch (err) {
      if (err instanceof RangeError) return true;
      throw err;
    }
  };
  let lo = 1_000;
  let hi = 1_000;
  while (!throws(hi)) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1_000) {
    const mid = Math.floor((lo + hi) / 2);
    if (throws(mid)) hi = mid;
    else lo = mid;
  }
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const records = new Map<string, unknown>();
  for (let i = 0; i < 100_000; i++) {
    const key = `evt_${i.toString(36).padStart(6, '0')}`;
    records.set(`notify\u0000${key}`, {
      route: 'notify',
      key,
      status: 'COMPLETED',
      fingerprint: 'f'.repeat(64).slice(i % 2),
      receivedAt: 1_790_000_000_000 + i,
      expiresAt: 1_793_000_000 + i,
      completedAt: 1_790_000_002_000 + i,
    });
  }
  gc?.();
  const bytes = (process.memoryUsage().heapUsed - before) / records.size;
  return { spreadLimit: hi, mapBytesPerRecord: Math.round(bytes) };
}

const [arg] = process.argv.slice(2);
if (arg === undefined) throw new Error('usage: node bench/reconcile-runner.ts <settings json> | --peer');
const result = arg === '--peer' ? peer() : await run(JSON.parse(arg) as RunnerSettings);
process.stdout.write(`${JSON.stringify(result)}\n`);
