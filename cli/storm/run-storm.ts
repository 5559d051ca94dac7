/**
 * One retry storm, start to verdict: plan, send, (restart the executor mid-run), wait for
 * the work to settle, reconcile, read the tables, judge. The local stack's admin calls
 * (`POST /_local/restart-executor`, `POST /_local/reconcile`) are used when the storm
 * targets the local stack; elsewhere those steps are reported as not run.
 *
 * Across several local Regions (`regions`): each event's requests go to the Regions in turn
 * (storm-sender.ts), every Region's executor is restarted mid-run, the settle wait watches every
 * Region's queue and the verdict reads every Region's DLQ. One reconciliation, in the first
 * Region, covers every Region's records: they are in the one table.
 */
import type { Target } from '../target.ts';
import { peekDeadLetters } from '../operations/dead-letters.ts';
import type { ReconcileReport } from '../../lambdas/reconciler/reconcile.ts';
import { createRouteControl } from '../../lambdas/routes/route-control.ts';
import type { RouteControl } from '../../lambdas/routes/route-control.ts';
import type { SampleRoute } from '../../local/index.ts';
import { planStorm } from './storm-plan.ts';
import type { StormMix } from './storm-plan.ts';
import { buildReport } from './storm-report.ts';
import type { BreakerSummary, ReconciliationSummary, StormReport, Verification } from './storm-report.ts';
import { runSenders } from './storm-sender.ts';
import type { EventOutcome, SenderOptions } from './storm-sender.ts';
import { readEffects, readRecords, waitForSettle } from './storm-verify.ts';
import type { SettleResult } from './storm-verify.ts';

/** One local Region the storm sends to. */
export interface StormRegion {
  readonly name: string;
  /** Its gateway: webhooks and its own admin calls. */
  readonly url: string;
  /** Its queues (and the shared table). */
  readonly target: Target;
}

export interface StormOptions {
  readonly events: number;
  readonly concurrency: number;
  readonly mix: StormMix;
  /** The sender's retry ladder, unscaled, in milliseconds. */
  readonly ladderMs: readonly number[];
  readonly timeScale: number;
  readonly seed: number;
  readonly url: string;
  readonly route: SampleRoute;
  readonly secret: string;
  readonly toleranceSeconds: number;
  /** The route's lease, when known: slow actions are kept inside it. */
  readonly leaseSeconds: number | undefined;
  /** Where the stack's tables are read; undefined: no verification of effects. */
  readonly target: Target | undefined;
  /** The local stack's URL, for its admin calls; undefined: no restart, no reconciliation. */
  readonly adminUrl: string | undefined;
  /**
   * Several local Regions, the first one `url`'s, `adminUrl`'s and `target`'s. @default - one Region
   */
  readonly regions?: readonly StormRegion[];
  readonly restartExecutor: boolean;
  readonly settleTimeoutMs: number;
  /** At most this many reconcile runs (each one after the work settled again). */
  readonly maxReconcileRounds: number;
  readonly onProgress?: (phase: string, done: number, total: number, note?: string) => void;
}

async function admin<T>(adminUrl: string, path: string, body: unknown): Promise<T> {
  const response = await fetch(new URL(path, adminUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(300_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/** The delay of a slow action: longer than the ladder's third step, scaled, but inside the lease. */
export function slowDelayMs(ladderMs: readonly number[], timeScale: number, leaseSeconds: number | undefined): number {
  const third = (ladderMs[2] ?? ladderMs.at(-1) ?? 30_000) * timeScale;
  const wanted = Math.round(third * 1.5) + 50;
  return leaseSeconds === undefined ? wanted : Math.min(wanted, Math.round(leaseSeconds * 1000 * 0.5));
}

type Progress = NonNullable<StormOptions['onProgress']>;
type Timed = <T>(phase: string, work: () => Promise<T>) => Promise<T>;

/** Where the run's time went, by phase, and a wrapper that adds a phase's time to it. */
function phaseClock(): { phasesMs: Record<string, number>; timed: Timed } {
  const phasesMs: Record<string, number> = {};
  const timed: Timed = async (phase, work) => {
    const t = Date.now();
    try {
      return await work();
    } finally {
      phasesMs[phase] = (phasesMs[phase] ?? 0) + (Date.now() - t);
    }
  };
  return { phasesMs, timed };
}

/** The executor restart halfway through the sending, at every Region's admin call, and what became of it. */
function midRunRestart(o: StormOptions, regions: readonly StormRegion[] | undefined): { midRun: SenderOptions['midRun']; outcome: () => string } {
  let executorRestart = o.restartExecutor ? 'not run: not the local stack' : 'off';
  const adminUrl = o.adminUrl;
  // Every Region's executor, each at its own admin call.
  const adminUrls = regions === undefined ? (adminUrl === undefined ? [] : [adminUrl]) : regions.map((r) => r.url);
  const midRun =
    o.restartExecutor && adminUrl !== undefined
      ? {
          afterEvents: Math.floor(o.events / 2),
          action: async () => {
            try {
              const outs = await Promise.all(adminUrls.map((url) => admin<{ abandonedBatches: number }>(url, '/_local/restart-executor', {})));
              const abandoned = outs.reduce((sum, out) => sum + out.abandonedBatches, 0);
              executorRestart = `done mid-run (${abandoned} batches abandoned in flight${regions === undefined ? '' : `, ${regions.length} regions`})`;
            } catch (err) {
              executorRestart = `failed: ${(err as Error).message}`;
            }
          },
        }
      : undefined;
  return { midRun, outcome: () => executorRestart };
}

/** Route control over the storm's tables and queues; undefined when they cannot be reached. */
function stormRouteControl(target: Target | undefined): RouteControl | undefined {
  if (target === undefined) return undefined;
  return createRouteControl({
    dynamo: target.dynamo,
    eventsTable: target.eventsTable,
    sqs: target.sqs,
    queueUrl: target.queueUrl,
    // A route with a queue of its own gets its parked work back there on resume.
    ...(target.routeQueueUrls === undefined ? {} : { routeQueueUrls: target.routeQueueUrls }),
    // Parked work whose body is in the bucket gets its object kept alive before it is re-sent.
    ...(target.s3 === undefined || target.bodyBucket === undefined ? {} : { s3: target.s3, bodyBucket: target.bodyBucket }),
    config: target.config,
  });
}

async function pausedRoute(routes: RouteControl | undefined, route: string): Promise<{ reason?: string } | undefined> {
  const state = (await routes?.list())?.find((r) => r.route === route);
  return state?.state === 'paused' ? { ...(state.reason === undefined ? {} : { reason: state.reason }) } : undefined;
}

/** Resumes the route when it is paused before the storm begins. */
async function resumeBeforeSending(routes: RouteControl | undefined, route: string): Promise<BreakerSummary> {
  const breaker: BreakerSummary = { checked: routes !== undefined, pausedBefore: false, trippedDuringStorm: false, reenqueuedOnResume: 0 };
  if (routes === undefined || (await pausedRoute(routes, route)) === undefined) return breaker;
  const resumed = await routes.resume(route);
  return { ...breaker, pausedBefore: true, reenqueuedOnResume: resumed.reenqueued };
}

/**
 * Resumes the route when the storm's own duplicates tripped its circuit breaker (layer 4: a key
 * that comes more than its threshold times): work is parked, not lost, and an operator would resume.
 */
async function resumeAfterSending(routes: RouteControl | undefined, route: string, breaker: BreakerSummary, timed: Timed): Promise<BreakerSummary> {
  if (routes === undefined) return breaker;
  const tripped = await pausedRoute(routes, route);
  if (tripped === undefined) return breaker;
  const resumed = await timed('resuming', () => routes.resume(route));
  return {
    ...breaker,
    trippedDuringStorm: true,
    ...(tripped.reason === undefined ? {} : { reason: tripped.reason }),
    reenqueuedOnResume: breaker.reenqueuedOnResume + resumed.reenqueued,
  };
}

/**
 * Waits for the work to settle, as often as asked. Every wait counts toward one figure, reported
 * both as the `settling` phase and in the settle check, so the two can never disagree.
 */
function settler(o: StormOptions, target: Target, regions: readonly StormRegion[] | undefined, keys: readonly string[], phasesMs: Record<string, number>, progress: Progress) {
  let waits = 0;
  let last: SettleResult | undefined;
  const settle = async (): Promise<SettleResult> => {
    const result = await waitForSettle(target, o.route.name, keys, {
      timeoutMs: o.settleTimeoutMs,
      ...(regions === undefined ? {} : { queues: regions.map((r) => r.target) }),
      onTick: (queued, executing) => {
        progress('settling', 0, 0, `${queued} queued, ${executing} executing`);
      },
    });
    waits++;
    phasesMs.settling = (phasesMs.settling ?? 0) + result.waitedMs;
    last = { ...result, waitedMs: phasesMs.settling };
    return last;
  };
  return { settle, waits: () => waits, last: () => last };
}

/** Reconciles, and settles the work it re-enqueued, until a run finds nothing to do or the rounds run out. */
async function reconcileUntilQuiet(adminUrl: string, o: StormOptions, timed: Timed, progress: Progress, settle: () => Promise<unknown>): Promise<ReconciliationSummary> {
  const totals = { rounds: 0, reversed: 0, reenqueued: 0, needsAttention: 0 };
  try {
    for (let round = 0; round < o.maxReconcileRounds; round++) {
      progress('reconciling', round + 1, o.maxReconcileRounds);
      // Everything recent, with no settle time: the storm has waited for the work itself.
      const report = await timed('reconciling', () =>
        admin<ReconcileReport>(adminUrl, '/_local/reconcile', { settleSeconds: 0, stuckAfterSeconds: 0 }),
      );
      totals.rounds++;
      totals.reversed += report.counts.reversed;
      totals.reenqueued += report.counts.reenqueued;
      totals.needsAttention = report.counts.needsAttention;
      // Re-enqueued work runs now; the next round checks what it did.
      if (report.counts.reenqueued === 0 && report.counts.reversed === 0) break;
      if (report.counts.reenqueued > 0) await settle();
    }
    return { ran: true, ...totals };
  } catch (err) {
    return { ran: false, ...totals, reason: (err as Error).message };
  }
}

/** Reads what the stack holds for the storm's keys: records, ledger entries since `fromMs`, and every Region's dead letters. */
async function readEndState(o: StormOptions, target: Target, regions: readonly StormRegion[] | undefined, keys: readonly string[], fromMs: number, timed: Timed) {
  const dlqs = regions === undefined ? [target] : regions.map((r) => r.target);
  const [records, effectsAfter, dead] = await timed('verifying', () =>
    Promise.all([
      readRecords(target, o.route.name, keys),
      readEffects(target, o.route.name, fromMs),
      Promise.all(dlqs.map((t) => peekDeadLetters(t, { max: 10_000 }))).then((lists) => lists.flat()),
    ]),
  );
  const deadLetters = new Map(dead.filter((d) => d.route === o.route.name).map((d) => [d.key, d.reason]));
  return { records, effectsAfter, deadLetters };
}

const NOT_RECONCILED: ReconciliationSummary = { ran: false, rounds: 0, reversed: 0, reenqueued: 0, needsAttention: 0, reason: 'not the local stack' };

/** After the sending: settle, reconcile (on the local stack), and read the tables for the verdict. */
async function settleAndVerify(
  o: StormOptions,
  target: Target,
  regions: readonly StormRegion[] | undefined,
  events: readonly EventOutcome[],
  fromMs: number,
  clock: { phasesMs: Record<string, number>; timed: Timed },
  progress: Progress,
): Promise<{ verification: Verification; reconciliation: ReconciliationSummary }> {
  let reconciliation: ReconciliationSummary = NOT_RECONCILED;
  const keys = events.filter((e) => e.accepted).map((e) => e.key);
  const waits = settler(o, target, regions, keys, clock.phasesMs, progress);
  const first = await waits.settle();
  if (o.adminUrl !== undefined) reconciliation = await reconcileUntilQuiet(o.adminUrl, o, clock.timed, progress, waits.settle);
  progress('verifying', 0, 0);
  const { records, effectsAfter, deadLetters } = await readEndState(o, target, regions, keys, fromMs, clock.timed);
  const verification = { records, effectsAfter, deadLetters, settle: waits.last() ?? first, settleWaits: waits.waits() };
  return { verification, reconciliation };
}

/** Runs one storm, start to verdict (see the module comment). */
export async function runStorm(o: StormOptions): Promise<StormReport> {
  const startedAt = Date.now();
  const delay = slowDelayMs(o.ladderMs, o.timeScale, o.leaseSeconds);
  const plans = planStorm(o.events, o.mix, o.ladderMs.length, delay, o.seed);
  const progress = o.onProgress ?? (() => undefined);
  const regions = o.regions !== undefined && o.regions.length > 1 ? o.regions : undefined;
  const restart = midRunRestart(o, regions);
  const clock = phaseClock();
  const target = o.target;
  const routes = stormRouteControl(target);
  let breaker = await resumeBeforeSending(routes, o.route.name);

  progress('sending', 0, o.events);
  const { requests, events } = await clock.timed('sending', () => runSenders(plans, {
    url: o.url,
    ...(regions === undefined ? {} : { regions: regions.map((r) => ({ name: r.name, url: r.url })) }),
    route: o.route,
    secret: o.secret,
    ladderMs: o.ladderMs.map((ms) => Math.max(1, Math.round(ms * o.timeScale))),
    concurrency: o.concurrency,
    toleranceSeconds: o.toleranceSeconds,
    onEventDone: (done, sent) => {
      progress('sending', done, o.events, `${sent} requests`);
    },
    ...(restart.midRun === undefined ? {} : { midRun: restart.midRun }),
  }));
  breaker = await resumeAfterSending(routes, o.route.name, breaker, clock.timed);

  const checked = target === undefined ? undefined : await settleAndVerify(o, target, regions, events, startedAt - 60_000, clock, progress);
  return buildReport({
    startedAt,
    endedAt: Date.now(),
    url: o.url,
    route: o.route.name,
    ...(regions === undefined ? {} : { regions: regions.map((r) => ({ name: r.name, url: r.url })) }),
    settings: {
      events: o.events,
      concurrency: o.concurrency,
      mix: o.mix,
      ladderMs: o.ladderMs,
      timeScale: o.timeScale,
      slowActionMs: delay,
      seed: o.seed,
      restartExecutor: o.restartExecutor,
    },
    requests,
    events,
    verification: checked?.verification,
    reconciliation: checked?.reconciliation ?? NOT_RECONCILED,
    executorRestart: restart.outcome(),
    breaker,
    phasesMs: clock.phasesMs,
  });
}
