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

export async function runStorm(o: StormOptions): Promise<StormReport> {
  const startedAt = Date.now();
  const delay = slowDelayMs(o.ladderMs, o.timeScale, o.leaseSeconds);
  const plans = planStorm(o.events, o.mix, o.ladderMs.length, delay, o.seed);
  const progress = o.onProgress ?? (() => undefined);

  let executorRestart = o.restartExecutor ? 'not run: not the local stack' : 'off';
  const adminUrl = o.adminUrl;
  const regions = o.regions !== undefined && o.regions.length > 1 ? o.regions : undefined;
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

  const phasesMs: Record<string, number> = {};
  const timed = async <T>(phase: string, work: () => Promise<T>): Promise<T> => {
    const t = Date.now();
    try {
      return await work();
    } finally {
      phasesMs[phase] = (phasesMs[phase] ?? 0) + (Date.now() - t);
    }
  };
  // The circuit breaker (layer 4) pauses a route whose key comes more than its threshold
  // times, and a storm does exactly that. Work is parked, not lost: the storm resumes the
  // route once its senders are done, as an operator would, and then checks everything.
  const target = o.target;
  const routes: RouteControl | undefined =
    target === undefined
      ? undefined
      : createRouteControl({
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
  const paused = async (): Promise<{ reason?: string } | undefined> => {
    const state = (await routes?.list())?.find((r) => r.route === o.route.name);
    return state?.state === 'paused' ? { ...(state.reason === undefined ? {} : { reason: state.reason }) } : undefined;
  };
  let breaker: BreakerSummary = { checked: routes !== undefined, pausedBefore: false, trippedDuringStorm: false, reenqueuedOnResume: 0 };
  if (routes !== undefined && (await paused()) !== undefined) {
    const resumed = await routes.resume(o.route.name);
    breaker = { ...breaker, pausedBefore: true, reenqueuedOnResume: resumed.reenqueued };
  }

  progress('sending', 0, o.events);
  const { requests, events } = await timed('sending', () => runSenders(plans, {
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
    ...(midRun === undefined ? {} : { midRun }),
  }));

  if (routes !== undefined) {
    const tripped = await paused();
    if (tripped !== undefined) {
      const resumed = await timed('resuming', () => routes.resume(o.route.name));
      breaker = {
        ...breaker,
        trippedDuringStorm: true,
        ...(tripped.reason === undefined ? {} : { reason: tripped.reason }),
        reenqueuedOnResume: breaker.reenqueuedOnResume + resumed.reenqueued,
      };
    }
  }

  let verification: Verification | undefined;
  let reconciliation: ReconciliationSummary = { ran: false, rounds: 0, reversed: 0, reenqueued: 0, needsAttention: 0, reason: 'not the local stack' };
  if (target !== undefined) {
    const keys = events.filter((e) => e.accepted).map((e) => e.key);
    // Every wait counts toward one figure, reported both as the `settling` phase and in the
    // settle check, so the two can never disagree.
    let settleWaits = 0;
    const settleOnce = async (): Promise<SettleResult> => {
      const result = await waitForSettle(target, o.route.name, keys, {
        timeoutMs: o.settleTimeoutMs,
        ...(regions === undefined ? {} : { queues: regions.map((r) => r.target) }),
        onTick: (queued, executing) => {
          progress('settling', 0, 0, `${queued} queued, ${executing} executing`);
        },
      });
      settleWaits++;
      phasesMs.settling = (phasesMs.settling ?? 0) + result.waitedMs;
      return { ...result, waitedMs: phasesMs.settling };
    };
    let settle = await settleOnce();
    const fromMs = startedAt - 60_000;
    if (adminUrl !== undefined) {
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
          if (report.counts.reenqueued > 0) settle = await settleOnce();
        }
        reconciliation = { ran: true, ...totals };
      } catch (err) {
        reconciliation = { ran: false, ...totals, reason: (err as Error).message };
      }
    }
    progress('verifying', 0, 0);
    const dlqs = regions === undefined ? [target] : regions.map((r) => r.target);
    const [records, effectsAfter, dead] = await timed('verifying', () =>
      Promise.all([
        readRecords(target, o.route.name, keys),
        readEffects(target, o.route.name, fromMs),
        Promise.all(dlqs.map((t) => peekDeadLetters(t, { max: 10_000 }))).then((lists) => lists.flat()),
      ]),
    );
    const deadLetters = new Map(dead.filter((d) => d.route === o.route.name).map((d) => [d.key, d.reason]));
    verification = { records, effectsAfter, deadLetters, settle, settleWaits };
  }

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
    verification,
    reconciliation,
    executorRestart,
    breaker,
    phasesMs,
  });
}
