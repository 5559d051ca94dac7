/** The end of a run: the quiet weeks of a long one, then the settle: no more faults, every actor ends, the queue drains, the reconciler runs. */
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';
import { pollAny } from './actor-executor.ts';
import { deliver } from './actor-ingest.ts';
import { moveTask, redriveCli } from './actor-operator.ts';
import { leapTo, runReconciler } from './actor-reconciler.ts';
import { checkRateLimit } from './checkers/rate-limit-kept.ts';
import { strandedAtEnd } from './checkers/records-end-settled.ts';
import { BROWNOUT } from './run-shape.ts';
import { DAY, HOUR, LONG_RUN_MS, STUCK_AFTER_SECONDS, a0 } from './sim-constants.ts';
import { checkAcceptedOrder, checkLines, customerOf } from './sim-ordering.ts';
import { drainActors } from './stepping.ts';
import { replicateDue } from './world-dynamo.ts';
import { quietLeap, redriveOnLastDays, ttlSweep } from './world-time.ts';
import { ROUTE_NAMES } from './world.ts';
import type { World } from './world.ts';

export async function answerEveryKey(w: World): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await drainActors(w);
    // A sender retries only within its scheme's retry window (deliver makes a later copy a replay).
    const unanswered = [...w.keys.values()].filter(
      (k) => !k.answered && (k.firstSentAt === undefined || w.nowMs - k.firstSentAt <= (w.routes.get(k.route)?.senderRetryWindowSeconds ?? 0) * 1000),
    );
    if (unanswered.length === 0) return;
    for (const k of unanswered) await deliver(w, k);
  }
  await drainActors(w);
}

export async function drainQueue(w: World): Promise<void> {
  for (let round = 0; round < 400; round++) {
    await drainActors(w);
    if (await pollAny(w)) continue;
    const depth = w.allWorkQueues.reduce((n, q) => n + q.depth, 0);
    if (depth === 0) return;
    // Messages in flight or hidden: move the clock to the next one's return.
    const next = Math.min(...w.allWorkQueues.flatMap((q) => q.snapshot().map((m) => m.visibleAt)));
    await leapTo(w, Math.max(w.nowMs + 1, next));
  }
  w.violations.push(`the work queue did not drain while settling (${w.allWorkQueues.reduce((n, q) => n + q.depth, 0)} messages left)`);
}

export async function endLongRun(w: World): Promise<void> {
  // A run of weeks lasts past 40 days: past the TTL (35 days, or 19) and the queues' retention (14).
  w.sqsDown = false;
  if (w.dynamoPlan === BROWNOUT) w.dynamoPlan = w.shape.dynamo;
  if (w.shape.long && w.nowMs - w.startMs < LONG_RUN_MS) {
    const untilMs = LONG_RUN_MS + w.startMs + a0(w.seed) * 3 * DAY;
    if (w.shape.lastDayRedrives) await redriveOnLastDays(w, untilMs);
    await quietLeap(w, untilMs - w.nowMs, !w.shape.lastDayRedrives);
  }
  if (w.shape.long) {
    // A replayer who kept every capture posts each once more, weeks on: past the records' TTL
    // (35 days) and TTL's lag, where only the replay memory stands between a captured body
    // signed without a timestamp and a new generation of paid work (defect 3).
    await ttlSweep(w);
    for (const k of w.keys.values()) if (k.captured !== undefined) await deliver(w, k, true);
  }
}

export async function settle(w: World): Promise<void> {
  // ---- settle: no more faults; let every actor end, then let the queue and the reconciler do their work.
  w.sqsDown = false;
  w.dynamoPlan = undefined;
  if (w.shape.longPause) {
    await drainActors(w);
    await w.sched.spawn('operator', `resume ${ROUTE_NAMES.pay} after weeks`, async () => {
      await w.control.resume(ROUTE_NAMES.pay);
    });
    await drainActors(w);
  }
  await answerEveryKey(w);
  for (let round = 0; round < 3; round++) {
    await drainQueue(w);
    w.advance((STUCK_AFTER_SECONDS + w.config.queue.resendAfterSeconds + 60) * 1000);
    await runReconciler(w);
    await drainActors(w);
    // A person redrives what reached the DLQ once, the way the seed says: FAILED work runs again,
    // once: the console's move task, the CLI's receive-send-delete, or the CLI's bulk redrive
    // of every FAILED record (whose DLQ copies then stay behind, harmless, and are moved too).
    if (round === 0) {
      const how = w.random();
      if (how < 0.35) moveTask(w);
      else if (how < 0.7) redriveCli(w);
      else {
        // The incident is over: half the hopeless keys' downstream is fixed, so their redriven
        // work completes (and must leave the failed index), the rest fails again.
        w.downstreamFixed = true;
        w.stats.bulkRedrives++;
        await w.sched.spawn('operator', 'bulk redrive of every route', async () => {
          w.stats.bulkRedriven += (await w.bulk.run({ routes: [...w.routes.keys()] }, { ratePerSecond: 1e9 })).redriven;
        });
        await drainActors(w);
        await drainQueue(w);
        if (how > 0.85) moveTask(w);
      }
    }
  }
  await drainQueue(w);
  await runReconciler(w);
  await drainActors(w);
  // The schedule's next run, when the settle leaves accepted work only the reconciler can send.
  // The settle's runs come minutes apart, and a run that finds the window finished less than
  // half an interval ago is not due and does nothing but sweep (reconcile-cursor.ts, minGapMs).
  // A record whose resend failed in the last due run before the settle (its body object's read
  // failed: markStranded, for the next run) waited for a run the settle never made (seed 1963).
  // The deployed schedule makes it within the hour. Only a run left so pays for it: every other
  // run ends as it did.
  let waiting = false;
  for (const k of w.keys.values()) {
    const record = await w.observerStore.get(k.route, k.key);
    if (record !== undefined && strandedAtEnd(k, record, w.routes, w.nowMs)) waiting = true;
  }
  if (waiting) {
    w.advance(HOUR);
    await runReconciler(w, true);
    await drainActors(w);
    await drainQueue(w);
    await drainActors(w);
  }
}

export async function tally(w: World): Promise<void> {
  // The control's tables agree once every write has replicated: the invariants read Region 0's.
  if (w.eventual) await replicateDue(w, true);
  w.stats.multiRegionRuns = w.regionCount > 1 ? 1 : 0;
  w.stats.replicatedConflicts = w.dynamoStats.replicatedConflicts;
  w.stats.maxClockSkewMs = w.sched.maxSkewMs;
  for (const q of [...w.allWorkQueues, ...w.dlqs]) {
    w.stats.sqsDuplicates += q.stats.duplicates;
    w.stats.concurrentDeliveries += q.stats.concurrentDeliveries;
    w.stats.unseenReceives += q.stats.unseenReceives;
  }
  w.stats.ambiguousWrites = w.dynamoStats.ambiguousWrites;
  w.stats.throttles = w.dynamoStats.throttles;
  w.stats.slowAnswers = w.dynamoStats.slowAnswers;
  for (const client of w.faultClients) client.destroy();
  w.stats.horizonDays = (w.nowMs - w.startMs) / DAY;
  w.stats.claimCheckAllRuns = w.shape.claimCheck.all ? 1 : 0;
  w.stats.shortTtlRuns = w.shape.shortTtl ? 1 : 0;
  w.stats.deployedShardRuns = w.shape.timeShards === EVENTS_TABLE.timeShards ? 1 : 0;
  if (w.shape.ordered) {
    w.stats.orderedRuns = 1;
    // Per customer: every run at an earlier place ended before any at a later place began
    // (sim-ordering.ts). The control (a table per Region) has no one line to read.
    if (!w.eventual) {
      const ordered = [...w.keys.values()]
        .filter((k) => k.route === ROUTE_NAMES.pay)
        .map((k) => ({
          route: k.route,
          key: k.key,
          entity: customerOf(k.order),
          runs: k.runs,
          everFailed: k.everFailed,
          ...(k.answeredSeq === undefined ? {} : { answeredSeq: k.answeredSeq }),
          ...(k.firstArrivalSeq === undefined ? {} : { firstArrivalSeq: k.firstArrivalSeq }),
          ...(k.placeFailed === true ? { placeFailed: true } : {}),
        }));
      checkLines(ordered, w.violations, w.stats);
      checkAcceptedOrder(ordered, w.violations);
    }
  }
  if (w.shape.rate !== undefined) {
    w.stats.rateLimitedRuns = 1;
    w.stats.ownQueueRuns = w.shape.rate.ownQueue ? 1 : 0;
    checkRateLimit(w.routes.get(ROUTE_NAMES.pay)?.rateLimit, w.admissions, w.payStarts, w.skewBoundMs, w.violations);
  }
}
