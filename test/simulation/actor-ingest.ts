/** The ingest actor: a sender's deliveries, duplicates, bursts and replays, each an invocation of the real ingestDelivery. */
import type { ResolvedRoute } from '../../lambdas/config/resolve-config.ts';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { ingestDelivery } from '../../lambdas/ingest/ingest-delivery.ts';
import { prepareRoutes } from '../../lambdas/ingest/prepared-route.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { StaticSecretSource } from '../../local/static-secret-source.ts';
import { paddingOf, secretOf } from './delivery-bodies.ts';
import { checkCount, checkTrip, observeEventStore } from './ingest-observers.ts';
import type { KeyState } from './key-state.ts';
import { perRegion } from './regions.ts';
import { DAY, INGEST_TIMEOUT_MS } from './sim-constants.ts';
import { pick, watchCalls, workKey } from './sim-util.ts';
import { wakeWoken } from './stepping.ts';
import { orderOf } from './world-ports.ts';
import type { World } from './world.ts';

/** The ingest's dependencies, observed. */
export function buildIngest(w: World): void {
  const ingestRouteState = w.pauseReach.observe(w.sched.gate(
    watchCalls(perRegion(w, (table) => new DynamoDbRouteStateStore(w.clientOf.ingest, table)), 'pause', (args) => {
      const request = args[1] as { by?: string; key?: string };
      if (request.by === 'circuit-breaker') checkTrip(w, args[0] as string, request.key, 'paused its route by the circuit breaker');
    }),
    'routeState',
  ));
  w.ingestDeps = {
    routes: prepareRoutes(w.config.routes),
    store: w.sched.gate(observeEventStore(w), 'events'),
    // A new delivery's send is where its answer is decided (a worker's lease of its message starts
    // the breaker's count): an ingest that dies once it began is taken as having answered (killActor).
    queue: watchCalls(w.gatedQueue, 'send', (args) => {
      const meta = w.sched.current()?.meta;
      // The event number as the send began: a copy that arrives later came after an answer it could have given.
      if (meta !== undefined && (args[0] as WorkMessage).startsCount === true) meta.sentAtSeq ??= w.arrivals;
    }),
    bodies: w.bodies,
    order: orderOf(w, w.clientOf.ingest),
    secrets: new StaticSecretSource(Object.fromEntries(w.config.routes.map((r) => [r.secretName, secretOf(r)]))),
    now: w.now,
    resendAfterMs: w.resendAfterMs,
    breaker: { routeState: ingestRouteState },
  };
}

/**
 * A delivery of the key: its sender's (re)try, signed now, or `replay`: the first delivery's
 * captured bytes and headers posted again by someone else, at any age. A sender retries only
 * within its scheme's retry window; a copy asked for after it is a replay.
 */
export async function deliver(w: World, k: KeyState, replay = false): Promise<void> {
  const route = w.routes.get(k.route) as ResolvedRoute;
  const senderGaveUp = k.firstSentAt !== undefined && w.nowMs - k.firstSentAt > route.senderRetryWindowSeconds * 1000;
  const captured = k.captured;
  if ((replay || senderGaveUp) && captured !== undefined) {
    w.stats.replays++;
    w.trace?.(`replay of ${k.key}, ${((w.nowMs - (k.firstSentAt ?? w.nowMs)) / DAY).toFixed(1)} days after it was first sent`);
    await ingestActor(w, k, captured);
    return;
  }
  if (k.delivered > 0) k.duplicateWindows.add(Math.floor(w.nowMs / w.resendAfterMs));
  k.firstSentAt ??= w.nowMs;
  const signed = signDelivery(route.signature, secretOf(route), k.body, {
    nowSeconds: Math.floor(w.nowMs / 1000),
    ...(route.signature.scheme === 'standard-webhooks' ? { id: k.key } : {}),
  });
  // A proxy on the way may pad the key header with whitespace (defect 4): the signature
  // still verifies (the verifier trims it), and the key must be the same.
  const padding = route.signature.scheme === 'standard-webhooks' ? paddingOf(w.random()) : undefined;
  if (padding !== undefined) {
    signed['webhook-id'] = `${padding.before}${k.key}${padding.after}`;
    w.stats.paddedKeyHeaders++;
  }
  if (k.delivered > 0 && (route.signature.scheme === 'standard-webhooks' || route.signature.scheme === 'stripe')) w.stats.resignedRetries++;
  if (k.body.length > 200) w.stats.bodiesAtLimits++;
  const headers = { ...signed, 'idempotency-key': k.key, 'content-type': 'application/json' };
  k.captured ??= headers;
  await ingestActor(w, k, headers);
}
export async function ingestActor(w: World, k: KeyState, headers: Record<string, string>): Promise<void> {
  await wakeWoken(w);
  // A sender's copies alternate between the Regions (latency-based DNS, a failover, an
  // endpoint per Region): each copy's claim meets the others' on the one table.
  const region = (k.home + k.delivered) % w.regionCount;
  if (region !== k.home) w.stats.crossRegionCopies++;
  k.delivered++;
  if (k.inFlight > 0) k.concurrent = true;
  k.inFlight++;
  w.stats.deliveries++;
  const arrival = ++w.arrivals;
  k.firstArrivalSeq ??= arrival;
  (k.arrivalSeqs ??= []).push(arrival);
  await w.sched.spawn(
    'ingest',
    `ingest ${k.key}`,
    async (actor) => {
      try {
        // Lambda's time left is the sandbox's own monotonic count: true time.
        const timeLeftMs = (): number => (actor.meta.deadlineMs as number) - w.nowMs;
        const outcome = await ingestDelivery(w.ingestDeps, { method: 'POST', routeName: k.route, headers, rawBody: k.body, bodyEncoding: 'utf8', timeLeftMs });
        w.trace?.(`ingest ${k.key} answered: ${outcome.kind}${outcome.kind === 'duplicate' ? ` ${outcome.answerAs}, repeats ${String(outcome.repeats)}` : ''}`);
        if (outcome.kind === 'duplicate') checkCount(w, k, outcome.repeats ?? 0);
        k.answered = true;
        k.lastAnsweredAt = w.nowMs;
        k.answeredSeq ??= ++w.arrivals;
        if (outcome.kind === 'accepted' && outcome.placeFailed === true) k.placeFailed = true;
      } catch (error) {
        // A 5xx (DynamoDB or SQS down) or a 4xx: the sender retries, as later duplicates of the schedule.
        w.trace?.(`ingest ${k.key} refused: ${String(error)}`);
        if ((error as { status?: number }).status === 413) w.stats.refusedTooLarge++;
      } finally {
        k.inFlight--;
      }
    },
    { deadlineMs: w.nowMs + INGEST_TIMEOUT_MS, arrival, region, keyState: k },
  );
}

/** The next key is delivered for the first time. */
export async function deliverOp(w: World): Promise<void> {
  const k = w.pending.shift();
  if (k === undefined) return;
  w.keys.set(workKey(k.route, k.key), k);
  w.keysByOrder.set(k.order, k);
  await deliver(w, k);
}

/** A sender retries a key. */
export async function duplicateOp(w: World, a: number): Promise<void> {
  const k = pick([...w.keys.values()], a);
  if (k !== undefined) await deliver(w, k);
}

export async function burstOp(w: World, a: number, b: number): Promise<void> {
  // Copies at once: each one's ingest is an actor; the steps that follow interleave them.
  const k = pick([...w.keys.values()], a);
  if (k === undefined) return;
  const copies = 2 + Math.floor(b * 4);
  for (let i = 0; i < copies; i++) await deliver(w, k);
}

export async function replayOp(w: World, a: number, b: number): Promise<void> {
  // Half the time the replayer aims at the oldest capture: the one whose record may have
  // expired, where a replay is most harmful (a new generation of paid work).
  const captures = [...w.keys.values()].filter((c) => c.captured !== undefined);
  const oldest = captures.reduce<KeyState | undefined>((o, c) => (o === undefined || (c.firstSentAt ?? Infinity) < (o.firstSentAt ?? Infinity) ? c : o), undefined);
  const k = b < 0.5 ? oldest : pick(captures, a);
  if (k !== undefined) await deliver(w, k, true);
}
