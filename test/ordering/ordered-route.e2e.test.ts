/**
 * Ordering per entity (issue 24), its second must-show, on the real ingest and executor handlers,
 * DynamoDB Local and fauxqs: a route ordered by customer gets 20 customers x 10 events, every
 * delivery sent 2 or 3 times, all copies shuffled and sent 20 at a time while three executor
 * instances poll the queue; one run dies after its effect in the middle of it all.
 *
 * What "accepted order" means here: the sends of one customer are concurrent, so no sender order
 * exists to keep. The ingest takes a place in the customer's line before its first 202 (one
 * conditional put each), and the order of those places IS the accepted order: it is read back from
 * the line's items, and the runs are held to it. It is also held to the clocks where they can
 * tell: an event whose creating copy was answered 202 before another event's first copy was even
 * sent holds the earlier place.
 *
 * The crash: the first run past the 80th whose customer has five or more events behind it posts its
 * ledger entry, then dies as a worker does (lambdas/demo/worker-death.ts): its record stays
 * EXECUTING under a 15 s lease, and its batch goes back to the queue whole. (The local runtime ends
 * only the dying record's invocation: the batch's other records finish in the background, where a
 * Lambda's would die with the process.) The executors keep polling until its message has come back
 * and been refused (locked). Then the fleet stops, every other run ends, and the executors' clock
 * moves past the lease and the takeover margin (fauxqs' visibility cannot wait that long: the
 * message would reach maxReceiveCount first, see executor-fixture.ts). The clock moves while
 * nothing runs, so no live lease is taken over by the jump itself.
 */
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogItemExtraInput, LogItemMessage } from '@aws-lambda-powertools/logger/types';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Action } from '../../lambdas/actions/action.ts';
import { dieAsWorker } from '../../lambdas/demo/worker-death.ts';
import { entityHash, linePartition, placeOfSortKey } from '../../lambdas/domain/entity-order.ts';
import { ledgerEntries } from '../../lambdas/ledger/ledger.ts';
import type { Ledger } from '../../lambdas/ledger/ledger.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { TAKEOVER_MARGIN_MS } from '../../lambdas/store/record-transitions.ts';
import { ROUTE, waitFor } from '../support/executor-fixture.ts';
import type { ExecutorFixture } from '../support/executor-fixture.ts';
import { SCHEME_ROUTES, signedDelivery } from '../support/ingest-fixture.ts';
import type { Delivery } from '../support/ingest-fixture.ts';
import { reconcilerFixture, recentWindow } from '../support/reconciler-fixture.ts';
import { seededRandom } from '../../scripts/storm/storm-plan.ts';

const CUSTOMERS = 20;
const EVENTS_PER_CUSTOMER = 10;
/** Sends in flight at once: a sender's (or several senders') concurrent deliveries. */
const SEND_PARALLELISM = 20;
/** Executor instances polling at once, each taking batches of 10 (the event source's default). */
const EXECUTORS = 3;
/**
 * The queue's visibility timeout. The fixture's 1 s is shorter than most batches take here (about
 * 1 s, up to 4 s on two cores; up to 14 s with a second run of this test beside it): a message
 * would be received again, and again, while its batch still runs, each receive counting toward
 * maxReceiveCount, where a deployed queue's (6x the function's timeout) gives it none. 6 s keeps
 * that to slow batches, and brings the crashed worker's batch back soon.
 */
const VISIBILITY_SECONDS = 6;
/** The shuffle's and the copies' seed: a failure names it, and the same seed sends in the same order. */
const SEED = 24;
/** A sender's tries of one copy answered 500 or more. */
const SENDER_TRIES = 5;
/** The longest a step of the crash may take: a batch can take 14 s on a loaded machine. */
const SLOW_STEP_MS = 30_000;
/** The crash comes in the middle: not before this many runs started. */
const CRASH_AFTER_RUNS = 80;
/** ...and on a run with at least this many of its customer's events behind it. */
const EVENTS_BEHIND_CRASH = 5;

const ORDERED_ROUTE = { ...(SCHEME_ROUTES.find((r) => r.name === ROUTE) as (typeof SCHEME_ROUTES)[number]), orderBy: '{body:/customer}' };


interface Event {
  readonly key: string;
  readonly customer: string;
  readonly seq: number;
  readonly delivery: Delivery;
  readonly copies: number;
}

/** One run of the action, by the executors' clock. */
interface Run {
  readonly key: string;
  readonly customer: string;
  /** The event's index among its customer's, as generated (not its place). */
  readonly seq: number;
  readonly attempt: number;
  readonly startedAt: number;
  /** When it returned or threw; never, for the run that died. */
  endedAt?: number;
  /** It returned: its record is to complete. */
  ok?: boolean;
  /** Set on the run that died after its effect: the end of the lease it died holding. */
  crashedLeaseUntil?: number;
}

/** One copy sent to the ingest, by the ingest's clock (the wall clock here). */
interface Send {
  readonly key: string;
  readonly sentAt: number;
  readonly answeredAt: number;
  readonly status: number;
  readonly replayed: boolean;
}

/** The executor's logger, counting the outcome of every `execution` line (outcome and key). */
class OutcomeLog extends Logger {
  readonly counts = new Map<string, number>();
  readonly byKey = new Map<string, string[]>();

  constructor() {
    super({ serviceName: 'retryproof-executor-test' });
  }

  #note(input: LogItemMessage, extra: LogItemExtraInput): void {
    const fields = extra[0];
    if (input !== 'execution' || typeof fields !== 'object' || fields instanceof Error) return;
    const outcome = String(fields.outcome);
    const key = String(fields.key);
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
    this.byKey.set(key, [...(this.byKey.get(key) ?? []), outcome]);
  }

  override info(input: LogItemMessage, ...extra: LogItemExtraInput): void {
    this.#note(input, extra);
    super.info(input, ...extra);
  }

  override warn(input: LogItemMessage, ...extra: LogItemExtraInput): void {
    this.#note(input, extra);
    super.warn(input, ...extra);
  }

  override debug(input: LogItemMessage, ...extra: LogItemExtraInput): void {
    this.#note(input, extra);
    super.debug(input, ...extra);
  }

  count(outcome: string): number {
    return this.counts.get(outcome) ?? 0;
  }
}

/**
 * The scene the action writes into: every run's start and end, and the one crash. The fixture
 * is built after the action, so its clock and ledger are set once it exists.
 */
class Scene {
  readonly runs: Run[] = [];
  crash: Run | undefined;
  fx: ExecutorFixture | undefined;
  ledger: Ledger | undefined;

  now(): number {
    if (this.fx === undefined) throw new Error('the scene has no fixture yet');
    return this.fx.now();
  }

  /** Runs started and not ended, the crashed one aside. */
  active(): number {
    return this.runs.filter((r) => r.endedAt === undefined && r !== this.crash).length;
  }

  /** Whether this run is the one to die: the middle of the work, with events of its customer behind it. */
  #diesHere(run: Run): boolean {
    if (this.crash !== undefined || run.attempt !== 1 || this.runs.length <= CRASH_AFTER_RUNS) return false;
    // Runs of one customer follow its line (asserted below), so the runs it finished are the places before this one.
    const done = this.runs.filter((r) => r.customer === run.customer && r.ok === true).length;
    return EVENTS_PER_CUSTOMER - (done + 1) >= EVENTS_BEHIND_CRASH;
  }

  /** The route's action: one ledger entry per run (with its run number), each run's start and end recorded. */
  action(): Action {
    return async (ctx) => {
      const body = ctx.body as { customer: string; seq: number; amount: number; currency: string };
      const run: Run = { key: ctx.key, customer: body.customer, seq: body.seq, attempt: ctx.attempt, startedAt: this.now() };
      this.runs.push(run);
      const dies = this.#diesHere(run);
      if (dies) this.crash = run;
      const ledger = this.ledger;
      if (ledger === undefined) throw new Error('the scene has no ledger yet');
      try {
        const entry = await ledger.post({ route: ctx.route, idempotencyKey: ctx.key, amount: body.amount, currency: body.currency, postedAt: Date.now(), attempt: ctx.attempt });
        if (dies) {
          // The lease this worker dies holding: no other run of the customer may start before it ends.
          const record = await this.fx?.record(ctx.key);
          run.crashedLeaseUntil = Number(record?.leaseUntil);
          return await dieAsWorker();
        }
        run.ok = true;
        return { entryId: entry.entryId };
      } finally {
        if (!dies) run.endedAt = this.now();
      }
    };
  }
}

/** The executor instances: each polls the queue in a loop; stopped as a fleet while the clock moves. */
class Fleet {
  #stopped = false;
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;
  #inFlight = 0;
  readonly errors: unknown[] = [];
  /** How long each batch that received messages took, ms (a died one: until it died). */
  readonly durations: number[] = [];
  readonly #loops: Promise<void>[] = [];
  readonly #fx: ExecutorFixture;

  constructor(fx: ExecutorFixture) {
    this.#fx = fx;
  }

  start(instances: number): void {
    for (let i = 0; i < instances; i++) this.#loops.push(this.#loop());
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      if (this.#held !== undefined) {
        await this.#held;
        continue;
      }
      this.#inFlight++;
      let received = 0;
      try {
        const polledAt = Date.now();
        received = (await this.#fx.poll()).received;
        if (received > 0) this.durations.push(Date.now() - polledAt);
      } catch (err) {
        this.errors.push(err);
        this.#stopped = true;
      } finally {
        this.#inFlight--;
      }
      // An empty queue is polled again a little later, as the event source's long polls would.
      if (received === 0) await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** No new batch is taken until resume(); waits for the batches in flight to end. */
  async hold(): Promise<void> {
    this.#held = new Promise((resolve) => (this.#release = resolve));
    await waitFor('the batches in flight to end', () => Promise.resolve(this.#inFlight === 0 ? true : undefined), SLOW_STEP_MS);
  }

  resume(): void {
    this.#release?.();
    this.#held = undefined;
  }

  get idle(): boolean {
    return this.#inFlight === 0;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.resume();
    await Promise.all(this.#loops);
  }
}

describe('a route ordered by customer', () => {
  it('runs each customer\'s events in accepted order, never two at once, with one effect each after reconciliation, through a worker crash', async () => {
    // Prepare: the route, the action that records its runs, 200 events and their shuffled copies.
    const scene = new Scene();
    const outcomes = new OutcomeLog();
    const rf = await reconcilerFixture({
      routes: [ORDERED_ROUTE],
      // Under the demo action's name: the reconciler checks effects in the ledger of `payout`.
      actions: { payout: scene.action() },
      logger: outcomes,
      ordered: true,
      visibilityTimeoutSeconds: VISIBILITY_SECONDS,
    });
    const { fx } = rf;
    scene.fx = fx;
    scene.ledger = fx.ledgerClient;
    const random = seededRandom(SEED);
    const run = randomUUID().slice(0, 8);
    const events: Event[] = [];
    for (let c = 0; c < CUSTOMERS; c++) {
      const customer = `cus_${run}_${String(c).padStart(2, '0')}`;
      for (let seq = 0; seq < EVENTS_PER_CUSTOMER; seq++) {
        const key = `evt_${run}_${String(c).padStart(2, '0')}_${seq}`;
        const delivery = signedDelivery(ROUTE, key, { payload: { customer, seq, amount: 100 + seq, currency: 'EUR' } });
        events.push({ key, customer, seq, delivery, copies: random() < 0.5 ? 2 : 3 });
      }
    }
    const copies = events.flatMap((e) => Array.from({ length: e.copies }, () => e));
    for (let i = copies.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [copies[i], copies[j]] = [copies[j] as Event, copies[i] as Event];
    }
    const fleet = new Fleet(fx);
    // A test that fails half-way leaves no executor polling behind it.
    onTestFinished(() => fleet.stop());
    const fleetOk = (): void => {
      if (fleet.errors.length > 0) throw new Error(`an executor instance failed: ${String(fleet.errors[0])}`);
    };

    // Act: the copies go out 20 at a time while the executors run; a run dies in the middle.
    const startedAt = Date.now();
    fleet.start(EXECUTORS);
    const sends: Send[] = [];
    let next = 0;
    const sender = async (): Promise<void> => {
      for (let i = next++; i < copies.length; i = next++) {
        const event = copies[i] as Event;
        // A sender retries an answer of 500 or more (our own failure: a DynamoDB Local slowed to a crawl, say).
        for (let tries = 0; tries < SENDER_TRIES; tries++) {
          const sentAt = Date.now();
          const answer = await fx.ingest.invoke(event.delivery);
          const status = Number(answer.statusCode);
          sends.push({ key: event.key, sentAt, answeredAt: Date.now(), status, replayed: answer.headers?.['idempotent-replayed'] === 'true' });
          if (status < 500) break;
        }
      }
    };
    const sending = Promise.all(Array.from({ length: SEND_PARALLELISM }, sender));

    const crashed = await waitFor('a run to die in the middle', () => {
      fleetOk();
      return Promise.resolve(scene.crash?.crashedLeaseUntil === undefined ? undefined : scene.crash);
    }, 45_000);
    // Its message comes back and finds the lease live: refused, while the executors keep going.
    await waitFor('the crashed record\'s message to be refused while its lease holds', () => {
      fleetOk();
      return Promise.resolve(outcomes.byKey.get(crashed.key)?.includes('locked') === true ? true : undefined);
    }, SLOW_STEP_MS);
    const heldBehindCrash = events.filter((e) => e.customer === crashed.customer && outcomes.byKey.get(e.key)?.includes('waiting-turn') === true).length;
    await fleet.hold();
    await waitFor('every run but the crashed one to end, and its record to be written', async () => {
      if (scene.active() > 0) return undefined;
      const executing = await Promise.all(events.map(async (e) => (e.key !== crashed.key && (await fx.record(e.key))?.status === 'EXECUTING' ? e.key : undefined)));
      return executing.every((k) => k === undefined) ? true : undefined;
    }, SLOW_STEP_MS);
    const leaseUntil = crashed.crashedLeaseUntil as number;
    fx.clockOffsetMs += Math.max(0, leaseUntil + TAKEOVER_MARGIN_MS + 1_000 - fx.now());
    fleet.resume();
    await sending;
    await waitFor('the queue to drain', async () => {
      fleetOk();
      return fleet.idle && (await queueDepth(fx)) === 0 && scene.active() === 0 ? true : undefined;
    }, 45_000);
    await fleet.stop();
    const postedBefore = await postedPerKey(fx);
    const report = await rf.reconciler().run(recentWindow(fx));
    // What the reconciler re-sent (a wake-up lost, say) runs now; nothing, when all went as it should.
    await fx.drain();
    const elapsedMs = Date.now() - startedAt;

    // Assess
    const doc = documentClient(fx.ingest.ddb);
    const places = new Map<string, { key: string; place: number; receivedAt: number; waiting: boolean }[]>();
    for (const customer of new Set(events.map((e) => e.customer))) {
      const out = await doc.send(
        new QueryCommand({
          TableName: fx.eventsTable,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :seq)',
          ExpressionAttributeValues: { ':pk': linePartition(ROUTE, entityHash(ROUTE, customer)), ':seq': 'SEQ#' },
          ConsistentRead: true,
        }),
      );
      places.set(
        customer,
        (out.Items ?? []).map((i) => ({ key: String(i.key), place: placeOfSortKey(String(i.sk)), receivedAt: Number(i.receivedAt), waiting: i.waiting === true })),
      );
    }
    // A record may hold two places (a copy answered while its first copy's place was not taken yet
    // takes one too: EntityOrder.placeIfAbsent); it runs at its first, and the line passes the other.
    const placeOf = new Map<string, number>();
    for (const p of [...places.values()].flat()) placeOf.set(p.key, Math.min(placeOf.get(p.key) ?? Number.POSITIVE_INFINITY, p.place));
    /** A line's keys in the order of their first places. */
    const inLine = (line: readonly { key: string; place: number }[]): string[] => [...new Set([...line].sort((a, b) => a.place - b.place).map((p) => p.key))];
    const evidence = { seed: SEED, run, crashed: { key: crashed.key, customer: crashed.customer, startedAt: crashed.startedAt, leaseUntil } };

    // Each event holds a place in its customer's line.
    const misplaced = events.filter((e) => (places.get(e.customer)?.filter((p) => p.key === e.key).length ?? 0) < 1).map((e) => e.key);
    expect({ ...evidence, misplaced }).toEqual({ ...evidence, misplaced: [] });

    // Runs per customer: in place order, and none starting before the one before it ended (a crashed
    // run "ends" when its lease does).
    const outOfOrder: unknown[] = [];
    const overlapping: unknown[] = [];
    for (const [customer, line] of places) {
      const accepted = inLine(line);
      const runs = scene.runs.filter((r) => r.customer === customer).sort((a, b) => a.startedAt - b.startedAt);
      const completedRuns = runs.filter((r) => r.ok === true).map((r) => r.key);
      if (JSON.stringify(completedRuns) !== JSON.stringify(accepted)) outOfOrder.push({ customer, accepted, ran: completedRuns });
      let freeAt = Number.NEGATIVE_INFINITY;
      let holder: Run | undefined;
      for (const r of runs) {
        if (r.startedAt < freeAt) overlapping.push({ customer, run: r, whileRunning: holder });
        const end = r.endedAt ?? r.crashedLeaseUntil ?? Number.POSITIVE_INFINITY;
        if (end > freeAt) [freeAt, holder] = [end, r];
      }
    }
    expect({ ...evidence, outOfOrder }).toEqual({ ...evidence, outOfOrder: [] });
    expect({ ...evidence, overlapping }).toEqual({ ...evidence, overlapping: [] });

    // The crashed run's record was taken over after its lease; its customer's next event ran after that.
    const crashRuns = scene.runs.filter((r) => r.key === crashed.key);
    expect(crashRuns.map((r) => [r.attempt, r.ok === true])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(crashRuns[1]?.startedAt).toBeGreaterThanOrEqual(leaseUntil);
    const crashedLine = inLine(places.get(crashed.customer) ?? []);
    const behind = crashedLine.slice(crashedLine.indexOf(crashed.key) + 1);
    expect(behind.length).toBeGreaterThanOrEqual(EVENTS_BEHIND_CRASH);
    const firstBehind = scene.runs.find((r) => r.key === behind[0]);
    expect(firstBehind?.startedAt).toBeGreaterThanOrEqual(crashRuns[1]?.endedAt ?? Number.POSITIVE_INFINITY);

    // Accepted order against the clocks: an event whose creating copy was answered before another's
    // first copy was sent holds the earlier place. A replayed 202 may come before its place is
    // taken (the creating copy is still between its claim and its place): counted, not held to.
    // A key whose sender met a 5xx is left out: the try that created its record may not have placed it.
    const failedKeys = new Set(sends.filter((s) => s.status >= 500).map((s) => s.key));
    const creatingAnswer = new Map(sends.filter((s) => s.status === 202 && !s.replayed && !failedKeys.has(s.key)).map((s) => [s.key, s.answeredAt]));
    const firstAnswer = new Map<string, number>();
    const firstSent = new Map<string, number>();
    for (const s of sends) {
      if (s.status === 202) firstAnswer.set(s.key, Math.min(firstAnswer.get(s.key) ?? Number.POSITIVE_INFINITY, s.answeredAt));
      firstSent.set(s.key, Math.min(firstSent.get(s.key) ?? Number.POSITIVE_INFINITY, s.sentAt));
    }
    let causalPairs = 0;
    let replayAheadOfPlace = 0;
    const againstTheClock: unknown[] = [];
    for (const a of events) {
      for (const b of events) {
        if (a.customer !== b.customer || a.key === b.key) continue;
        const before = (placeOf.get(a.key) ?? 0) < (placeOf.get(b.key) ?? 0);
        if ((creatingAnswer.get(a.key) ?? Number.POSITIVE_INFINITY) < (firstSent.get(b.key) ?? 0)) {
          causalPairs++;
          if (!before) againstTheClock.push({ answered: a.key, placeOf: placeOf.get(a.key), thenSent: b.key, placeOfNext: placeOf.get(b.key) });
        } else if ((firstAnswer.get(a.key) ?? Number.POSITIVE_INFINITY) < (firstSent.get(b.key) ?? 0) && !before) {
          replayAheadOfPlace++;
        }
      }
    }
    expect({ ...evidence, againstTheClock }).toEqual({ ...evidence, againstTheClock: [] });

    // Every copy answered 202 (after a sender's retries of a 5xx, if any), one created each key;
    // every record COMPLETED; the DLQ empty.
    expect(sends.filter((s) => s.status !== 202 && s.status < 500)).toEqual([]);
    expect(sends.filter((s) => s.status === 202)).toHaveLength(copies.length);
    const records = await Promise.all(events.map(async (e) => ({ key: e.key, status: (await fx.record(e.key))?.status })));
    expect(records.filter((r) => r.status !== 'COMPLETED')).toEqual([]);
    expect(await fx.takeDeadLetters()).toEqual([]);

    // One effect each after reconciliation: the crashed run's entry reversed, the takeover's kept.
    const doubled = [...postedBefore].filter(([, n]) => n > 1).map(([k]) => k);
    expect(doubled).toEqual([crashed.key]);
    expect(report.counts).toMatchObject({ reversed: 1, missing: 0, orphans: 0, failed: 0 });
    const after = await ledgerEntries(fx.ledgerClient, Date.now() - 3_600_000, Date.now() + 3_600_000);
    const posted = after.filter((e) => e.status === 'posted');
    expect(posted.map((e) => e.idempotencyKey).sort()).toEqual(events.map((e) => e.key).sort());
    expect(after.filter((e) => e.idempotencyKey === crashed.key).map((e) => [e.attempt, e.status]).sort()).toEqual([
      [1, 'reversed'],
      [2, 'posted'],
    ]);

    // Other customers ran meanwhile: more than one run at a time across the route.
    const maxAtOnce = maxConcurrent(scene.runs);
    expect(maxAtOnce).toBeGreaterThan(1);

    const waitingPlaces = [...places.values()].flat().filter((p) => p.waiting).length;
    // Two ingests claim in one order and place in the other: why the places, not the claims' times, are the order.
    const placedAgainstClaims = [...places.values()].reduce(
      (n, line) => n + line.filter((a) => line.some((b) => a.place < b.place && a.receivedAt > b.receivedAt)).length,
      0,
    );
    console.log(
      [
        `ordered route (seed ${SEED}): ${CUSTOMERS} customers x ${EVENTS_PER_CUSTOMER} events = ${events.length} keys`,
        `${copies.length} copies sent ${SEND_PARALLELISM} at a time, ${sends.filter((s) => s.status === 202).length} answered 202 (${sends.filter((s) => s.replayed).length} duplicates replayed, ${sends.filter((s) => s.status >= 500).length} 5xx retried)`,
        `${scene.runs.length} runs on ${EXECUTORS} executors (${scene.runs.filter((r) => r.endedAt !== undefined).length} completed, 1 died after its effect at place ${placeOf.get(crashed.key)} of its customer's 10 and was taken over after its lease; ${heldBehindCrash} of that customer's events were parked behind it meanwhile)`,
        `${outcomes.count('waiting-turn')} parks waiting for a turn (${waitingPlaces} places marked waiting; the rest found their turn come on the second look), ${outcomes.count('locked')} refused on a live lease, ${outcomes.count('duplicate')} surplus messages of completed records acknowledged`,
        `at most ${maxAtOnce} runs at once across customers, never 2 of one customer; batches took up to ${(Math.max(...fleet.durations) / 1000).toFixed(1)} s`,
        `runs in place order for every customer; ${causalPairs} pairs held to the clocks, ${replayAheadOfPlace} replayed 202s ahead of their place, ${placedAgainstClaims} events placed ahead of one claimed before them`,
        `reconciler: ${report.counts.reversed} duplicate effect reversed, ${report.counts.reenqueued} re-enqueued; 1 effect per key; DLQ 0`,
        `${(elapsedMs / 1000).toFixed(1)} s`,
      ].join('; '),
    );
  });
});

/** Messages waiting, hidden or delayed in the work queue. */
async function queueDepth(fx: ExecutorFixture): Promise<number> {
  const out = await fx.ingest.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: fx.queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const a = out.Attributes ?? {};
  return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
}

/** Posted ledger entries per key, before the reconciler looks. */
async function postedPerKey(fx: ExecutorFixture): Promise<Map<string, number>> {
  const entries = await ledgerEntries(fx.ledgerClient, Date.now() - 3_600_000, Date.now() + 3_600_000);
  const counts = new Map<string, number>();
  for (const e of entries) if (e.status === 'posted') counts.set(e.idempotencyKey, (counts.get(e.idempotencyKey) ?? 0) + 1);
  return counts;
}

/** The most runs in progress at one instant (finished runs only: the crashed one has no end). */
function maxConcurrent(runs: readonly Run[]): number {
  const edges = runs
    .filter((r) => r.endedAt !== undefined)
    .flatMap((r) => [
      { at: r.startedAt, step: 1 },
      { at: r.endedAt as number, step: -1 },
    ])
    // An end and a start at one instant do not overlap.
    .sort((a, b) => a.at - b.at || a.step - b.step);
  let now = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (now += e.step));
  return most;
}
