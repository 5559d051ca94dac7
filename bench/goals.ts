/**
 * The lean hot path's goals (issue 14) and the executor's (issue 26), each held against this run's figures: met or missed,
 * the ratio to Powertools, its spread, and for a missed goal why and what it would take.
 */
import type { SdkMode } from './bundles.ts';
import { DEFAULT_INPUTS, priceMonth, retryproofWriteUnits } from './cost-model.ts';
import { executorGoalsOf } from './executor-figures.ts';
import { bundleOf, handlerCpuMsOf } from './figures.ts';
import type { Figures } from './figures.ts';
import type { Measurements } from './measurements.ts';
import { f1, f2, x } from './goal.ts';
import type { Goal } from './goal.ts';
import { percentile } from './stats.ts';

/** The cost goal's month: 10 M deliveries, 5% duplicates, 2 KB bodies. */
export const COST_GOAL_MONTH = { deliveriesPerMonth: 10_000_000, duplicateShare: 0.05, bodyBytes: 2048 } as const;

export type { Goal } from './goal.ts';

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

/** The lowest and highest of paired ratios a[i] / b[i]. */
function rangeOfRatios(a: readonly number[], b: readonly number[]): [number, number] {
  const ratios = a.flatMap((v, i) => {
    const w = b[i];
    return w === undefined || w === 0 ? [] : [v / w];
  });
  return [Math.min(...ratios), Math.max(...ratios)];
}

/** Paired ratios a[i] / b[i], their 25th to 75th percentile. */
function quartilesOfRatios(a: readonly number[], b: readonly number[]): [number, number] {
  const ratios = a.flatMap((v, i) => {
    const w = b[i];
    return w === undefined || w === 0 ? [] : [v / w];
  });
  return [percentile(ratios, 25), percentile(ratios, 75)];
}

function latencyGoal(m: Measurements, f: Figures, w: 'b' | 'e', goal: number, figure: string): Omit<Goal, 'missed'> & { ratioValue: number } {
  const rp = m.loads[w].retryproof;
  const pt = m.loads[w].powertools;
  const r = f.p50[w].retryproof / f.p50[w].powertools;
  const [lo, hi] = rangeOfRatios(rp.roundP50s, pt.roundP50s);
  return {
    figure,
    goal: `≤ ${goal.toFixed(1)}x Powertools'`,
    retryproof: `${f1(f.p50[w].retryproof)} ms`,
    powertools: `${f1(f.p50[w].powertools)} ms`,
    ratio: x(r),
    spread: `${x(lo)}-${x(hi)} over ${rp.roundP50s.length} rounds`,
    met: r <= goal,
    ratioValue: r,
  };
}

function coldInitGoal(m: Measurements, f: Figures, mode: SdkMode): Goal {
  const rp = bundleOf(m, 'retryproof', mode);
  const pt = bundleOf(m, 'powertools', mode);
  const r = f.coldInit[mode].retryproof / f.coldInit[mode].powertools;
  const [lo, hi] = quartilesOfRatios(rp.initMs, pt.initMs);
  const label = mode === 'sdk-bundled' ? 'AWS SDK bundled' : '@aws-sdk/* external';
  const met = r <= 1.0 && rp.initMs.length >= 15;
  const floor = f.coldInitFloor[mode];
  const naiveRatio = f.coldInit[mode].naive / f.coldInit[mode].powertools;
  const own = (n: 'retryproof' | 'powertools' | 'naive'): number => bundleOf(m, n, 'sdk-external').bytes;
  return {
    figure: `cold init, ${label} (median of ${rp.initMs.length}, interleaved)`,
    goal: "≤ 1.0x Powertools'",
    retryproof: `${f1(f.coldInit[mode].retryproof)} ms`,
    powertools: `${f1(f.coldInit[mode].powertools)} ms`,
    ratio: x(r),
    spread: `${x(lo)}-${x(hi)} (p25-p75 of ${rp.initMs.length} paired runs)`,
    met,
    missed: met
      ? undefined
      : `An empty module starts in ${f1(floor)} ms; the naive receiver imports in ${f1(f.coldInit[mode].naive)} ms (${x(naiveRatio)}). ` +
        (rp.initMs.length < 15 ? `This run took ${rp.initMs.length} samples; the goal asks for 15 or more. ` : '') +
        `CPU time of the same imports: ${f1(f.coldInitCpu[mode].retryproof)} ms against ${f1(f.coldInitCpu[mode].powertools)} ms.`,
    why: met
      ? undefined
      : "Mostly the AWS SDK clients' own start, which all pay alike. Besides the SDK, retryproof carries " +
        `${kb(own('retryproof'))} of code, Powertools ${kb(own('powertools'))}, the naive receiver ${kb(own('naive'))}.`,
  };
}

/** The ingest handler's own CPU per delivery (process.cpuUsage around each call, one at a time), against Powertools'. */
function ingestCpuGoal(m: Measurements, w: 'a' | 'e', figure: string): Goal {
  const rp = handlerCpuMsOf(m.loads[w].retryproof);
  const pt = handlerCpuMsOf(m.loads[w].powertools);
  const r = rp / pt;
  const met = r <= 1.0;
  return {
    figure,
    goal: "≤ 1.0x Powertools'",
    retryproof: `${f2(rp)} ms`,
    powertools: `${f2(pt)} ms`,
    ratio: x(r),
    spread: `${m.loads[w].retryproof.deliveries} deliveries each, one at a time`,
    met,
    missed: met ? undefined : `${f2(rp - pt)} ms more a call than the peer for the same one DynamoDB request: our own steps and the SDK's handling of a larger request.`,
  };
}

/** The goals of issue 14, each against this run. */
export function goalsOf(m: Measurements, f: Figures): Goal[] {
  const goals: Goal[] = [];
  const ptNewRequests = f.requestsPerNew.powertools;
  goals.push({
    figure: 'DynamoDB requests, new delivery (b)',
    goal: '1',
    retryproof: f2(f.requestsPerNew.retryproof),
    powertools: f2(ptNewRequests),
    ratio: x(f.requestsPerNew.retryproof / ptNewRequests),
    spread: 'exact: counted on the wire',
    met: f.requestsPerNew.retryproof <= 1,
    missed:
      f.requestsPerNew.retryproof <= 1
        ? undefined
        : 'More than the claim: the ingest added a request to its happy path (protocol v4 starts the circuit breaker\'s count at the worker\'s lease).',
  });
  const retryMet = f.requestsPerRetry.retryproof <= 1;
  goals.push({
    figure: 'DynamoDB requests, duplicate (e)',
    goal: '1',
    retryproof: f2(f.requestsPerRetry.retryproof),
    powertools: f2(f.requestsPerRetry.powertools),
    ratio: x(f.requestsPerRetry.retryproof / f.requestsPerRetry.powertools),
    spread: 'exact: counted on the wire',
    met: retryMet,
    missed: retryMet
      ? undefined
      : "A sender's retry after our answer should find the work done and cost the claim alone; more means a duplicate's answer took a second request.",
  });
  const dup = latencyGoal(m, f, 'e', 1.0, 'duplicate answer p50 (e, sequential)');
  const requestMs = (n: 'retryproof' | 'powertools'): number => m.loads.e[n].requestMs / m.loads.e[n].requests;
  goals.push({
    ...dup,
    missed: dup.met
      ? undefined
      : `One request each (${f2(f.requestsPerRetry.retryproof)} against ${f2(f.requestsPerRetry.powertools)}), but ours takes longer: ` +
        `${f2(requestMs('retryproof'))} ms against ${f2(requestMs('powertools'))} ms. Our claim is a write that succeeds (it counts the hit ` +
        "the breaker reads and returns the record); the peer's is a PutItem its condition refuses, which DynamoDB Local answers faster. " +
        'DynamoDB Local also updates our table\'s three indexes inside each write, where DynamoDB propagates to a global secondary index ' +
        'after the write (its reads are eventually consistent); the peer\'s table has none. ' +
        `Handler CPU per duplicate, the sender's signing included: ${f2(f.cpuPerDelivery.e.retryproof / 1000)} ms against ` +
        `${f2(f.cpuPerDelivery.e.powertools / 1000)} ms.`,
  });
  const c16 = latencyGoal(m, f, 'b', 1.0, 'p50 at concurrency 16, unique (b)');
  const cpuR = f.cpuPerDelivery.b.retryproof / f.cpuPerDelivery.b.powertools;
  const model = (requests: number, sqs: number): number => DEFAULT_INPUTS.overheadMs + requests * DEFAULT_INPUTS.dynamoMs + sqs;
  const onAws = model(f.requestsPerNew.retryproof, DEFAULT_INPUTS.sqsMs) / model(ptNewRequests, DEFAULT_INPUTS.sqsMs);
  goals.push({
    ...c16,
    missed: c16.met
      ? undefined
      : `This machine is CPU-bound at concurrency 16 (load ${m.loadAverage.start.map(f1).join('/')} at the start), so an answer's wait ` +
        `follows the CPU a delivery costs: ${f1(f.cpuPerDelivery.b.retryproof / 1000)} ms against ${f1(f.cpuPerDelivery.b.powertools / 1000)} ms ` +
        `(${x(cpuR)}), the sender's signing included. On AWS, where round trips dominate, the model gives ${x(onAws)} at ` +
        `${DEFAULT_INPUTS.dynamoMs} ms per DynamoDB request and ${DEFAULT_INPUTS.sqsMs} ms per SQS send.`,
  });

  goals.push(ingestCpuGoal(m, 'a', 'ingest CPU per new delivery (a, handler only)'), ingestCpuGoal(m, 'e', 'ingest CPU per duplicate (e, handler only)'));

  const wcu = retryproofWriteUnits(COST_GOAL_MONTH.bodyBytes);
  const measured = m.writeUnits;
  const ptUnits = (share: number): number => {
    const n = 1_000_000;
    const report = priceMonth({ ...DEFAULT_INPUTS, bodyBytes: COST_GOAL_MONTH.bodyBytes, deliveriesPerMonth: n, duplicateShare: share });
    return report.usage.dynamoWriteUnits?.powertools ?? Number.NaN;
  };
  const ptNew = ptUnits(0) / 1_000_000;
  const ptDup = (ptUnits(0.5) - 500_000 * ptNew) / 500_000;
  const unitsGoal = (
    figure: string,
    limit: number,
    model: number,
    peer: number,
    measuredUnits: number | undefined,
    missed: string,
    peerMeasured?: number,
  ): Goal => ({
    figure,
    goal: `≤ ${limit}`,
    retryproof: String(model),
    powertools: String(peer),
    ratio: x(model / peer),
    spread:
      measuredUnits === undefined
        ? 'model only (no measurement in this run)'
        : `model; measured ${f2(measuredUnits)}${peerMeasured === undefined ? '' : ` (Powertools' ingest and consumer: ${f2(peerMeasured)})`} ` +
          `on DynamoDB Local (e, ${measured?.deliveries ?? 0} deliveries)`,
    // Met only when the model and the measurement both are.
    met: Math.max(model, measuredUnits ?? 0) <= limit,
    missed,
  });
  goals.push(
    unitsGoal(
      `write units per new delivery, whole life, ${COST_GOAL_MONTH.bodyBytes / 1024} KB body, index copies included`,
      4,
      wcu.newDeliveryLife,
      ptNew,
      measured?.newDeliveryLife,
      'The claim, the lease and the completion write the small record once each, and the byTime copy twice: at the claim, and at the ' +
        "completion, whose completedAt lets the reconciler skip completed work unread. Leaving the copy alone would save 1 unit " +
        '($0.63 per million deliveries) and make each hourly run read every record of its 24-hour window to learn its state: 24 ' +
        'eventually consistent reads of a record under 4 KB, 12 read units ($1.50 per million). The copy was kept.',
      m.powertoolsWriteUnits?.newDeliveryLife,
    ),
    unitsGoal(
      'write units per duplicate',
      1,
      wcu.duplicate,
      ptDup,
      measured?.duplicate,
      "A duplicate's hit count should rewrite a record under 1 KB and touch no index copy.",
    ),
  );

  const month = priceMonth({ ...DEFAULT_INPUTS, ...COST_GOAL_MONTH });
  const coreR = month.core.retryproof / month.core.powertoolsHttp;
  const around = [0, 0.3].flatMap((share) =>
    [1024, 8192].map((bodyBytes) => {
      const c = priceMonth({ ...DEFAULT_INPUTS, deliveriesPerMonth: COST_GOAL_MONTH.deliveriesPerMonth, duplicateShare: share, bodyBytes }).core;
      return c.retryproof / c.powertoolsHttp;
    }),
  );
  const line = (item: string): string => {
    const l = month.lines.find((c) => c.item === item);
    return l === undefined ? '?' : `$${l.retryproof.toFixed(2)} against $${l.powertoolsHttp.toFixed(2)}`;
  };
  goals.push({
    figure: 'cost, the requests part, 10 M deliveries/month, 5% duplicates, 2 KB (`npm run cost`)',
    goal: '≤ 1.0x HTTP API + Powertools',
    retryproof: `$${month.core.retryproof.toFixed(2)}`,
    powertools: `$${month.core.powertoolsHttp.toFixed(2)}`,
    ratio: `${coreR.toFixed(3)}x`,
    spread: `${x(Math.min(...around))}-${x(Math.max(...around))} at 0-30% duplicates and 1-8 KB bodies`,
    met: coreR <= 1.0,
    missed:
      coreR <= 1.0
        ? undefined
        : `DynamoDB makes the difference: writes ${line('DynamoDB writes')} (the write units above), storage ${line('DynamoDB storage (+PITR)')}, ` +
          `reads ${line('DynamoDB reads')} (the reconciler's window). The whole bill is \`npm run cost\`'s.`,
  });

  const rpB = bundleOf(m, 'retryproof', 'sdk-bundled');
  const ptB = bundleOf(m, 'powertools', 'sdk-bundled');
  const bundleR = rpB.bytes / ptB.bytes;
  const part = (name: string): number => rpB.byOrigin[name] ?? 0;
  const observability = part('@aws-lambda-powertools/logger') + part('@aws-lambda-powertools/metrics');
  const s3 = part('@aws-sdk/client-s3') + part('@aws-sdk/middleware-sdk-s3') + part('@aws-sdk/checksums');
  goals.push({
    figure: 'ingest bundle, AWS SDK bundled',
    goal: "≤ Powertools'",
    retryproof: kb(rpB.bytes),
    powertools: kb(ptB.bytes),
    ratio: x(bundleR),
    spread: 'exact: bytes of one esbuild output',
    met: bundleR <= 1,
    missed:
      bundleR <= 1
        ? undefined
        : `retryproof is ${kb(rpB.bytes - ptB.bytes)} larger. It carries ${s3 > 0 ? `the S3 client for large bodies (${kb(s3)}) and ` : ''}Powertools Logger and ` +
          `Metrics (${kb(observability)}), which the peer does not${part('valibot') > 0 ? `, and valibot (${kb(part('valibot'))}) to check its configuration again at cold start` : ''}; the peer carries Powertools' ` +
          `JMESPath engine and idempotency library (${kb((ptB.byOrigin['@aws-lambda-powertools/jmespath'] ?? 0) + (ptB.byOrigin['@aws-lambda-powertools/idempotency'] ?? 0))}) instead. ` +
          'Closing the gap would mean hand-written JSON logs and EMF metrics, which this project chose against (Powertools carries ' +
          'the log format, the metric flush and the cold-start metric the alarms use)' +
          (part('valibot') > 0 ? ', and no check of the configuration at cold start, which catches an environment edited by hand.' : '.') +
          (s3 > 0 ? '' : ' The S3 SDK for large bodies is a file of its own beside the bundle, read at the first large body only (architecture.md, D92).'),
  });
  for (const mode of ['sdk-bundled', 'sdk-external'] as const) goals.push(coldInitGoal(m, f, mode));
  // Issue 26: the executor against the Powertools SQS consumer.
  goals.push(...executorGoalsOf(m.executors));
  return goals;
}
