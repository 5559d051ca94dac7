/**
 * The executor actor: the Lambda event source's polls, each an executor invocation of the real
 * handler; and the operations that put a worker at a takeover edge, a slow lease write, or a
 * death between its ledger post and its effect.
 */
import { ROUTE_STATE_MAX_AGE_MS, dependencyBackoffSeconds, leaseMarginSeconds } from '../../lambdas/config/route-config.ts';
import { createExecutorHandler } from '../../lambdas/executor/create-executor-handler.ts';
import { RoutePauseCache } from '../../lambdas/executor/route-pauses.ts';
import type { RateGate } from '../../lambdas/ports/rate-gate.ts';
import { DynamoDbEntityOrder } from '../../lambdas/store/dynamodb-entity-order.ts';
import { DynamoDbRateGate } from '../../lambdas/store/dynamodb-rate-gate.ts';
import { TAKEOVER_MARGIN_MS } from '../../lambdas/store/record-transitions.ts';
import { observeExecutionStore } from './observed-execution-store.ts';
import { perRegion } from './regions.ts';
import type { Actor } from './scheduler.ts';
import { makeAction } from './sim-action.ts';
import { EPOCH, SIM_LOGGER, SIM_METRICS } from './sim-constants.ts';
import { contextOf, messageKey, pick, sqsRecordOf } from './sim-util.ts';
import type { SimulatedQueue } from './simulated-sqs.ts';
import type { SimReceivedMessage } from './simulated-sqs.ts';
import { killActor, stepActor, wakeWoken } from './stepping.ts';
import { replicateDue } from './world-dynamo.ts';
import { routeStateOf } from './world-ports.ts';
import { workQueuesOf } from './world-queues.ts';
import type { World } from './world.ts';
import type { SQSEvent } from 'aws-lambda';

/** The executor handler on its observed store, rate gate and ports. */
export function buildExecutor(w: World): void {
  w.executionStore = w.sched.gate(observeExecutionStore(w), 'store');

  // The pay route's rate gate (when the seed limits it): the real gate on the executor's faulty
  // client, its every admission noted at the true instant its caller read its clock for it.
  const realGate = w.sched.gate(perRegion(w, (table) => new DynamoDbRateGate(w.clientOf.executor, table, w.random)), 'rateGate');
  const rateGate: RateGate = {
    admit: async (route, limit, callerNowMs, window) => {
      const decision = await realGate.admit(route, limit, callerNowMs, window);
      if (decision.admitted) {
        w.admissions++;
        w.stats.rateAdmissions++;
      } else w.stats.rateDeferrals++;
      return decision;
    },
  };
  w.handler = createExecutorHandler({
    routes: w.routes,
    actions: new Map([['simpay', makeAction(w)]]),
    store: w.executionStore,
    rateGate,
    order: w.observedPlaces.observe(w.sched.gate(perRegion(w, (table) => new DynamoDbEntityOrder(w.clientOf.executor, table)), 'order'), () => w.stats.waitingTurns++),
    sleep: (ms) => sleep(w, ms),
    // The deployed cache (wire-executor.ts), aged on the container's own clock: true time here.
    pauses: w.pauseReach.check(new RoutePauseCache(routeStateOf(w, w.clientOf.executor), { maxAgeMs: ROUTE_STATE_MAX_AGE_MS, monotonicNow: () => w.nowMs })),
    workQueue: w.gatedQueue,
    bodies: w.bodies,
    visibility: w.visibility,
    maxReceiveCount: w.config.queue.maxReceiveCount,
    // As deployed (wire-executor.ts): a receive our own dependency failed on hands its message
    // back for longer each time, so an outage of a day spends the receives maxReceiveCount
    // has room for. Without it, seed 157's 27 minutes of DynamoDB errors spent all 18 at the
    // plain visibility timeout and sent live work to the DLQ.
    dependencyBackoff: (receiveCount) => dependencyBackoffSeconds(receiveCount, w.config.queue.visibilityTimeoutSeconds, w.config.executorTimeoutSeconds),
    now: w.now,
    random: w.random,
    newId: () => `id-${Math.floor(w.random() * 1e12).toString(36)}`,
    logger: SIM_LOGGER,
    metrics: SIM_METRICS,
  });
}

/**
 * A rate-limited run waiting for its start slot in its invocation: the strand parks, and
 * goes on by its own timer once true time reaches the slot (other actors may have moved
 * the clock past it meanwhile: it then finds itself late). Stepped before that, it is the
 * machine that waited: time moves on to the slot.
 */
export async function sleep(w: World, ms: number): Promise<void> {
  const dueMs = w.nowMs + ms;
  await w.sched.yieldPoint('executor.rate-wait', () => (w.nowMs >= dueMs ? dueMs : undefined));
  if (w.nowMs < dueMs) w.setNow(dueMs);
}

/**
 * The Lambda event source's poll: one ReceiveMessage of up to the batch size, handed to one
 * executor invocation as one event. SQS may answer out of order, and may hand out a message
 * another worker holds right now (simulated-sqs.ts [D1]). The records of the batch run in
 * parallel; the event source deletes the ones not reported in batchItemFailures once the
 * handler returns ("Reporting batch item failures", Lambda Developer Guide: "Lambda deletes
 * the messages that succeeded"), and nothing when the function fails or times out: then
 * the whole batch comes back after its visibility timeout.
 */
export async function poll(w: World, concurrent = false, region = 0): Promise<boolean> {
  await wakeWoken(w);
  if (w.eventual) await replicateDue(w);
  const max = 1 + Math.floor(w.sqsRandom() * w.shape.batchSize);
  const inOrder = w.sqsRandom() < 0.5;
  const includeInFlight = concurrent || w.sqsRandom() < w.shape.concurrentReceive;
  // Each queue has an event source of its own: whichever the seed picks first polls first.
  const candidates = workQueuesOf(w, region, w.regionQueues[region]?.own === undefined ? 0 : w.sqsRandom());
  let queue = candidates[0] as SimulatedQueue;
  let messages: SimReceivedMessage[] = [];
  for (const candidate of candidates) {
    queue = candidate;
    messages = candidate.receive(max, { ...(inOrder ? {} : { random: w.sqsRandom }), includeInFlight });
    if (messages.length > 0) break;
  }
  if (messages.length === 0) return false;
  for (const m of messages) w.delivered.add(m.messageId);
  w.stats.executions++;
  const startedAt = w.nowMs;
  const label = `executor ${messages.map((m) => `${m.messageId}:${messageKey(m.body)}`).join(',')}`;
  w.trace?.(`poll: ${label} (receives ${messages.map((m) => m.attributes.ApproximateReceiveCount).join(',')})`);
  await w.sched.spawn(
    'executor',
    label,
    async () => {
      const event: SQSEvent = { Records: messages.map((m) => sqsRecordOf(m, queue.arn)) };
      const response = await w.handler(event, contextOf(startedAt + w.executorTimeoutMs, () => w.nowMs));
      const failures = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      w.trace?.(`${label}: handed back ${[...failures].join(',') || 'none'}`);
      if (failures.size > 0 && failures.size < messages.length) w.stats.partialBatches++;
      // The event source deletes what succeeded: one more point where the worker can die.
      await w.sched.yieldPoint('eventSource.delete');
      for (const m of messages) if (!failures.has(m.messageId)) queue.delete(m.receiptHandle);
    },
    { messageIds: messages.map((m) => m.messageId), deadlineMs: startedAt + w.executorTimeoutMs, effectKeys: new Set<string>(), region },
  );
  return true;
}

/** Each Region's event source polls in turn, from a turn that moves on: whether any found work. */
export async function pollAny(w: World): Promise<boolean> {
  for (let i = 0; i < w.regionCount; i++) {
    if (await poll(w, false, (w.pollTurn + i) % w.regionCount)) {
      w.pollTurn = (w.pollTurn + i + 1) % w.regionCount;
      return true;
    }
  }
  return false;
}
/** A lost ReceiveMessage answer: the count rises and the message hides, and nobody runs it. */
export function unseenReceive(w: World, region: number): void {
  const queue = workQueuesOf(w, region, w.regionQueues[region]?.own === undefined ? 0 : w.sqsRandom())[0] as SimulatedQueue;
  const before = new Map(queue.snapshot().map((m) => [m.messageId, m.receiveCount]));
  if (!queue.unseenReceive({ random: w.sqsRandom })) return;
  for (const m of queue.snapshot()) {
    if (m.receiveCount !== before.get(m.messageId)) w.wasted.set(m.messageId, (w.wasted.get(m.messageId) ?? 0) + 1);
  }
}

/**
 * The takeover boundary for `holder`, stepped into its action first if it is not there yet:
 * the clock lands within twice the skew bound before its deadline (b below 0.5), or at the
 * earliest instant another worker may take the lease over (b from 0.5); another worker gets
 * the same message at once (SQS may hand out a message another worker holds) and goes as far
 * as its action's first call; then the holder goes on. A takeover margin too small for the
 * clocks' skew, or a holder's deadline later than its lease allows, shows as two runs at once.
 */
export async function takeoverEdge(w: World, holder: Actor, b: number): Promise<void> {
  const inAction = (p: Actor): boolean => p.waiters.some((waiter) => waiter.label.startsWith('downstream.'));
  for (let i = 0; i < 12 && holder.state === 'parked' && !inAction(holder); i++) await stepActor(w, holder);
  if (holder.state !== 'parked' || !inAction(holder)) return;
  const holderId = holder.id;
  const k = [...w.keys.values()].find((c) => c.lease?.holder === holderId);
  const route = k === undefined ? undefined : w.routes.get(k.route);
  if (k?.lease === undefined || route === undefined) return;
  // The holder's deadline in true time: its lease's end by its own clock, less its offset
  // and the lease margin (route-config.ts, leaseMarginSeconds).
  const deadlineTrue = k.lease.untilMs - holder.skewMs - leaseMarginSeconds(route.leaseSeconds) * 1000;
  // The earliest takeover: the lease's end plus TAKEOVER_MARGIN_MS by the newcomer's clock,
  // which may run up to the bound ahead. Never past the holder's Lambda timeout: a holder
  // killed there shows nothing.
  const u = (b % 0.5) * 2;
  const holderEndsAt = typeof holder.meta.deadlineMs === 'number' ? holder.meta.deadlineMs : Number.POSITIVE_INFINITY;
  if (b < 0.5) w.setNow(deadlineTrue - u * 2 * w.skewBoundMs);
  w.stats.edges++;
  const before = new Set(w.sched.live().map((p) => p.id));
  if (!(await poll(w, true, (holder.meta.region as number | undefined) ?? 0))) return;
  const newcomer = w.sched.parked().find((p) => p.kind === 'executor' && !before.has(p.id));
  // The earliest takeover: the lease's end plus TAKEOVER_MARGIN_MS by the newcomer's own
  // clock, exactly (its clock is known once it runs), or up to the bound earlier.
  if (b >= 0.5) w.setNow(Math.min(holderEndsAt, k.lease.untilMs + TAKEOVER_MARGIN_MS - (newcomer?.skewMs ?? w.skewBoundMs) - (u < 0.5 ? 0 : (u - 0.5) * 2 * w.skewBoundMs)));
  w.trace?.(`edge: holder #${holder.id} (skew ${holder.skewMs} ms) of ${k.key}, its deadline at ${deadlineTrue - EPOCH} ms, newcomer #${String(newcomer?.id)} (skew ${String(newcomer?.skewMs)} ms)`);
  for (let i = 0; i < 12 && newcomer?.state === 'parked' && !newcomer.waiters.some((waiter) => waiter.label === 'downstream.prepare'); i++) await stepActor(w, newcomer);
  if (newcomer?.state === 'parked') {
    const at = newcomer.waiters.findIndex((waiter) => waiter.label === 'downstream.prepare');
    if (at >= 0) await stepActor(w, newcomer, at / newcomer.waiters.length);
  }
  await stepActor(w, holder);
}

/** The event source of a Region polls. */
export async function pollOp(w: World, a: number): Promise<void> {
  await poll(w, false, w.regionAt(a));
}

export async function edgeOp(w: World, a: number, b: number): Promise<void> {
  // The takeover boundary: a worker inside its action (one already there, or a parked one
  // stepped until it is).
  const inAction = (p: Actor): boolean => p.waiters.some((waiter) => waiter.label.startsWith('downstream.'));
  const holder = pick(w.sched.parked().filter((p) => p.kind === 'executor' && inAction(p)), a) ?? pick(w.sched.parked().filter((p) => p.kind === 'executor'), a);
  if (holder !== undefined) await takeoverEdge(w, holder, b);
}

export async function slowLeaseOp(w: World, a: number, b: number): Promise<void> {
  // A lease write answered late: a worker about to send its lease write gets the answer
  // 3 to 12 s after DynamoDB acted (the lease is 3 x the action time, 15 s here; its
  // action deadline ends 2 s before). Then the clock lands at the earliest instant
  // another worker may take over. A deadline counted from after the write instead of
  // from before it (defect 11) runs past the lease there: two runs at once.
  const atLease = (p: Actor): boolean => p.waiters.some((waiter) => waiter.label === 'store.acquireLease');
  let holder = pick(w.sched.parked().filter((p) => p.kind === 'executor' && atLease(p)), a);
  if (holder === undefined) {
    // None is about to lease: a new invocation, stepped as far as its lease write.
    const before = new Set(w.sched.live().map((p) => p.id));
    if (!(await poll(w, false, w.regionAt(a))) && !(await poll(w, true, w.regionAt(a)))) return;
    holder = w.sched.parked().find((p) => p.kind === 'executor' && !before.has(p.id));
    for (let i = 0; i < 6 && holder?.state === 'parked' && !atLease(holder); i++) await stepActor(w, holder);
    if (holder?.state !== 'parked' || !atLease(holder)) return;
  }
  const at = holder.waiters.findIndex((waiter) => waiter.label === 'store.acquireLease');
  w.slowAnswerFor.set(holder.id, 3_000 + Math.floor(((b * 7) % 1) * 9_000));
  w.stats.slowLeases++;
  // (The write goes out once the actor's step has run the store's call as far as its I/O.)
  await stepActor(w, holder, at / holder.waiters.length);
  // The exact earliest takeover instant for the newcomer's clock.
  await takeoverEdge(w, holder, 0.5 + b / 4);
  w.slowAnswerFor.delete(holder.id);
}

export async function crashAfterPostOp(w: World, a: number): Promise<void> {
  // A worker dies between its ledger post and its effect (defect 8): its entry stands
  // with no charge of its own, and the next run posts and charges. The reconciler must
  // keep the completing run's entry; keeping the earliest reverses the one real charge.
  const postedNoEffect = (p: Actor): boolean =>
    ((p.meta.postedFirst as Set<string> | undefined)?.size ?? 0) > 0 && p.waiters.some((waiter) => waiter.label === 'downstream.charge');
  const executors = (): Actor[] => w.sched.parked().filter((p) => p.kind === 'executor');
  let victim = pick(executors().filter(postedNoEffect), a);
  if (victim === undefined) {
    // None is there: one about to post first, or any worker, stepped until it has posted.
    const candidate = pick(executors().filter((p) => p.waiters.some((waiter) => waiter.label === 'ledger.post-first')), a) ?? pick(executors(), a);
    for (let i = 0; i < 10 && candidate?.state === 'parked' && !postedNoEffect(candidate); i++) {
      const at = candidate.waiters.findIndex((waiter) => waiter.label === 'ledger.post-first');
      await stepActor(w, candidate, Math.max(0, at) / candidate.waiters.length);
    }
    if (candidate?.state === 'parked' && postedNoEffect(candidate)) victim = candidate;
  }
  if (victim === undefined) return;
  w.stats.cutsAfterPost++;
  killActor(w, victim, 'crash');
}
