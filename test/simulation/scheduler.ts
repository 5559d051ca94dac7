/**
 * A cooperative scheduler for the protocol simulation. Every call the real code makes on a
 * port (store, queue, ledger, route state, visibility) is a yield point, and so is every gap
 * between two attempts of one DynamoDB call (faulty-dynamodb.ts): the calling strand parks
 * there until the simulation picks it to go on. Exactly one strand runs between two yield
 * points, so a run's interleaving is decided by the seed alone, and any actor can be killed at
 * any yield point, which is what a crash looks like from the outside: the writes before it
 * landed, none after it did.
 *
 * An actor may run several strands at once: the executor handler processes the records of one
 * SQS batch in parallel (Powertools' `processInParallel`), each record its own chain of port
 * calls in the same async context. Each yield point is therefore a waiter of its own, and a
 * step wakes one waiter and waits until the actor is quiet again: the woken strand parked
 * again, the actor ended, or the strand ended inside the actor (it resolved into a
 * Promise.all), and in each case no DynamoDB request of the actor in flight. A strand may send
 * several requests at once (a port call's own Promise.all): their answers are acted on in the
 * order they were sent, never while another strand waits out an SDK retry's real timer
 * (answerTurn), so real time never decides what the seed draws next.
 *
 * Each actor has its own clock: the shared simulated instant plus an offset drawn when it is
 * spawned, as each Lambda reads its own machine's clock.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export type ActorKind = 'ingest' | 'executor' | 'reconciler' | 'operator';

/** One parked strand of an actor: the port call it waits in front of. */
export interface Waiter {
  readonly actor: Actor;
  readonly label: string;
  readonly resolve: () => void;
  /**
   * For a strand that waits on something that wakes it by itself (a timer of its own): the
   * simulated instant it woke, once it has. Such a strand is no stall: the simulation steps it
   * before anything else goes on (see wokenAt).
   */
  readonly wokenAt?: () => number | undefined;
}

/** One concurrent piece of work: an ingest invocation, an executor invocation, a reconciler run, an operator command. */
export interface Actor {
  readonly id: number;
  readonly kind: ActorKind;
  readonly label: string;
  /** This actor's clock minus the shared simulated instant, in ms (its machine's skew). */
  readonly skewMs: number;
  /** The port call its oldest parked strand waits in front of, when parked. */
  parkedAt: string | undefined;
  state: 'running' | 'parked' | 'done' | 'failed' | 'killed';
  error?: unknown;
  /** Free for the simulation: what the actor holds (message ids, keys, an effect done). */
  readonly meta: Record<string, unknown>;
  /** Its parked strands, oldest first. */
  readonly waiters: Waiter[];
  /** DynamoDB requests of this actor on the wire now (not parked between attempts). */
  inflight: number;
  /** Bumped at every park and at the end: a step is over when it moves. */
  events: number;
  /** Set by the scheduler while a step waits for the actor to be quiet again. */
  quiet?: () => void;
  /** Resolves once the answer to the actor's latest request sent has been acted on (answerTurn). */
  lastAnswer: Promise<void>;
  /** Calls of the actor between a failed attempt and the SDK's next step (its retry, or giving up): a real timer runs there. */
  retryGaps: number;
  /** Answers waiting for every retry gap of the actor to close. */
  readonly gapWaiters: (() => void)[];
}

/**
 * Port methods that return an AsyncIterable synchronously: the gate parks on the first read.
 * One missing here answers a Promise of its pages, and its caller's for-await throws a TypeError
 * the real port never throws (seed 23: readKeys, once the reconciler ran through its cursor).
 * A ledger's listWindow may answer either way (ledgerPages reads both).
 */
const ITERABLE_METHODS = new Set(['readWindow', 'listParked', 'listStranded', 'listFailed', 'readKeys', 'readBucket']);

export interface SchedulerOptions {
  /** The shared simulated instant, epoch ms. */
  readonly now: () => number;
  /** Draws an actor's clock offset when it is spawned. @default - no skew */
  readonly skewOf?: (kind: ActorKind) => number;
}

export class Scheduler {
  readonly #als = new AsyncLocalStorage<Actor>();
  readonly #actors: Actor[] = [];
  readonly #now: () => number;
  readonly #skewOf: (kind: ActorKind) => number;
  #nextId = 1;
  /** The largest |offset| any actor's clock had. */
  maxSkewMs = 0;

  constructor(options: SchedulerOptions) {
    this.#now = options.now;
    this.#skewOf = options.skewOf ?? (() => 0);
  }

  /** Actors parked at a yield point, oldest first. */
  parked(): Actor[] {
    return this.#actors.filter((a) => a.state === 'parked');
  }

  /** Actors not yet ended (parked or, briefly, running). */
  live(): Actor[] {
    return this.#actors.filter((a) => a.state === 'parked' || a.state === 'running');
  }

  /** The actor making the current call, if any. */
  current(): Actor | undefined {
    return this.#als.getStore();
  }

  /** The calling actor's clock: the shared instant plus its offset; the shared instant outside an actor. */
  now(): number {
    return this.#now() + (this.#als.getStore()?.skewMs ?? 0);
  }

  /** Starts an actor and lets it run until it is quiet (parked, or ended). */
  async spawn(kind: ActorKind, label: string, work: (actor: Actor) => Promise<void>, meta: Record<string, unknown> = {}): Promise<Actor> {
    const skewMs = Math.round(this.#skewOf(kind));
    this.maxSkewMs = Math.max(this.maxSkewMs, Math.abs(skewMs));
    const actor: Actor = { id: this.#nextId++, kind, label, skewMs, parkedAt: undefined, state: 'running', meta, waiters: [], inflight: 0, events: 0, lastAnswer: Promise.resolve(), retryGaps: 0, gapWaiters: [] };
    this.#actors.push(actor);
    const quiet = this.#untilQuiet(actor);
    void this.#als.run(actor, async () => {
      try {
        await work(actor);
        if (actor.state !== 'killed') actor.state = 'done';
      } catch (error) {
        if (actor.state !== 'killed') {
          actor.state = 'failed';
          actor.error = error;
        }
      }
      actor.waiters.length = 0;
      this.#event(actor);
    });
    await quiet;
    return actor;
  }

  /** Lets one parked strand of an actor go on (the oldest, or the one `pick` in [0, 1) chooses) until the actor is quiet again. */
  async step(actor: Actor, pick = 0): Promise<void> {
    if (actor.state !== 'parked' || actor.waiters.length === 0) return;
    const index = Math.min(actor.waiters.length - 1, Math.floor(pick * actor.waiters.length));
    const [waiter] = actor.waiters.splice(index, 1);
    if (waiter === undefined) return;
    actor.state = 'running';
    actor.parkedAt = actor.waiters[0]?.label;
    const quiet = this.#untilQuiet(actor);
    waiter.resolve();
    await quiet;
  }

  /** Kills an actor: none of its strands ever goes on, as a process that died at this point. */
  kill(actor: Actor): void {
    if (actor.state !== 'parked') return;
    actor.state = 'killed';
    actor.waiters.length = 0;
  }

  /** Runs every live actor to its end, picking the oldest parked one each time. */
  async runToEnd(limit = 10_000): Promise<void> {
    for (let i = 0; i < limit; i++) {
      const next = this.parked()[0];
      if (next === undefined) return;
      await this.step(next);
    }
    throw new Error(`actors did not finish within ${limit} steps`);
  }

  /**
   * The earliest instant one of an actor's parked strands woke by itself, and that strand's
   * index in its waiters; undefined when none has.
   */
  wokenAt(actor: Actor): { readonly at: number; readonly index: number } | undefined {
    let found: { at: number; index: number } | undefined;
    actor.waiters.forEach((w, index) => {
      const at = w.wokenAt?.();
      if (at !== undefined && (found === undefined || at < found.at)) found = { at, index };
    });
    return found;
  }

  /**
   * Parks the calling strand here until the simulation steps it; outside an actor, goes on at
   * once. `wokenAt`: see Waiter.
   */
  yieldPoint(label: string, wokenAt?: () => number | undefined): Promise<void> {
    const actor = this.#als.getStore();
    if (actor === undefined || actor.state === 'killed') return actor === undefined ? Promise.resolve() : new Promise<void>(() => undefined);
    return new Promise<void>((resolve) => {
      actor.waiters.push({ actor, label, resolve, ...(wokenAt === undefined ? {} : { wokenAt }) });
      actor.state = 'parked';
      actor.parkedAt = actor.waiters[0]?.label;
      this.#event(actor);
    });
  }

  /** A DynamoDB request of the calling actor went on the wire (faulty-dynamodb.ts calls it). */
  ioStarted(): void {
    const actor = this.#als.getStore();
    if (actor !== undefined) actor.inflight++;
  }

  /** ... and came back: if nothing else of the actor runs, the step may be over. */
  ioEnded(): void {
    const actor = this.#als.getStore();
    if (actor === undefined) return;
    actor.inflight--;
    if (actor.inflight === 0) this.#checkIdle(actor, actor.events);
  }

  /**
   * Called as a request of the calling actor goes on the wire: its answer's turn. Answers of
   * one actor's requests in flight together (a port call's Promise.all) are acted on in the
   * order the requests were sent, each once the one before has been acted on, not in the
   * order DynamoDB Local's answers happen to arrive (real time): `wait()`, called with the
   * answer in hand, resolves at this
   * answer's turn, and `done` ends it once what the answer set going has parked, ended or sent.
   * Outside an actor: no turn.
   */
  answerTurn(): { readonly wait: () => Promise<void>; readonly done: () => void } {
    const actor = this.#als.getStore();
    if (actor === undefined) return { wait: () => Promise.resolve(), done: () => undefined };
    const previous = actor.lastAnswer;
    let release = (): void => undefined;
    actor.lastAnswer = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Two rounds of the event loop: the continuation's microtasks have all run (as #checkIdle).
    return { wait: () => previous.then(() => this.#gapsClosed(actor)), done: () => void setImmediate(() => setImmediate(release)) };
  }

  /**
   * The SDK waits on a real timer (setTimeout, even of 0 ms) between a failed attempt and its
   * retry: an answer acted on while it runs would race it. faulty-dynamodb.ts opens a gap as an
   * attempt fails and closes it as the retry comes through (a yield point) or the call gives up.
   */
  retryGapOpened(): void {
    const actor = this.#als.getStore();
    if (actor !== undefined) actor.retryGaps++;
  }

  retryGapClosed(): void {
    const actor = this.#als.getStore();
    if (actor === undefined) return;
    actor.retryGaps--;
    if (actor.retryGaps === 0) for (const wake of actor.gapWaiters.splice(0)) wake();
  }

  async #gapsClosed(actor: Actor): Promise<void> {
    while (actor.retryGaps > 0) await new Promise<void>((resolve) => actor.gapWaiters.push(resolve));
  }

  /** Wraps a port so that every method call is a yield point named `<label>.<method>`. */
  gate<T extends object>(target: T, label: string): T {
    return new Proxy(target, {
      get: (obj, prop, receiver) => {
        const value: unknown = Reflect.get(obj, prop, receiver);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        const name = `${label}.${String(prop)}`;
        if (ITERABLE_METHODS.has(String(prop))) {
          const yieldPoint = (): Promise<void> => this.yieldPoint(name);
          return (...args: unknown[]) =>
            (async function* gated() {
              await yieldPoint();
              yield* method.apply(obj, args) as AsyncIterable<unknown>;
            })();
        }
        return async (...args: unknown[]) => {
          await this.yieldPoint(name);
          return method.apply(obj, args);
        };
      },
    });
  }

  /** Resolves once the actor is quiet: a strand parked, the actor ended, or it went idle. */
  #untilQuiet(actor: Actor): Promise<void> {
    const mark = actor.events;
    const quiet = new Promise<void>((resolve) => {
      actor.quiet = resolve;
    });
    // The woken strand may end at once (into a Promise.all) without a request or a park.
    this.#checkIdle(actor, mark);
    return quiet;
  }

  #event(actor: Actor): void {
    actor.events++;
    // A strand parked or ended while another of the actor's requests is on the wire: the step
    // goes on until that answer is in and acted on (ioEnded), or its arrival, real-time, would
    // land in whatever step or operation comes next, and the seed would not decide the run.
    if (actor.inflight > 0) return;
    const quiet = actor.quiet;
    actor.quiet = undefined;
    quiet?.();
  }

  /**
   * After every pending microtask and I/O callback has run twice over, an actor that parked
   * nothing new, ended nothing and has no request on the wire has no strand running: the
   * woken one ended inside the actor.
   */
  #checkIdle(actor: Actor, mark: number): void {
    setImmediate(() => {
      setImmediate(() => {
        if (actor.quiet === undefined || actor.events !== mark || actor.inflight > 0) return;
        if (actor.state === 'running' && actor.waiters.length > 0) actor.state = 'parked';
        this.#event(actor);
      });
    });
  }
}
