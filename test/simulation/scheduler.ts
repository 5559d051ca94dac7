/**
 * A cooperative scheduler for the protocol simulation. Every call the real code makes on a
 * port (store, queue, ledger, route state, visibility) is a yield point: the calling actor
 * parks there until the simulation picks it to go on. Exactly one actor runs between two
 * yield points, so a run's interleaving is decided by the seed alone, and any actor can be
 * killed at any yield point, which is what a crash looks like from the outside: the writes
 * before it landed, none after it did.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export type ActorKind = 'ingest' | 'executor' | 'reconciler' | 'operator';

/** One concurrent piece of work: an ingest invocation, an executor invocation, a reconciler run, an operator command. */
export interface Actor {
  readonly id: number;
  readonly kind: ActorKind;
  readonly label: string;
  /** The port call it is parked in front of, when parked. */
  parkedAt: string | undefined;
  state: 'running' | 'parked' | 'done' | 'failed' | 'killed';
  error?: unknown;
  /** Free for the simulation: what the actor holds (message ids, keys, an effect done). */
  readonly meta: Record<string, unknown>;
  /** Set by the scheduler: go on from the yield point. */
  wake?: () => void;
  /** Set by the scheduler: the actor parked again or ended. */
  settled?: () => void;
}

/** Port methods that return an AsyncIterable synchronously: the gate parks on the first read. */
const ITERABLE_METHODS = new Set(['readWindow', 'listParked', 'listStranded']);

export class Scheduler {
  readonly #als = new AsyncLocalStorage<Actor>();
  readonly #actors: Actor[] = [];
  #nextId = 1;

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

  /** Starts an actor and lets it run to its first yield point (or its end). */
  async spawn(kind: ActorKind, label: string, work: (actor: Actor) => Promise<void>, meta: Record<string, unknown> = {}): Promise<Actor> {
    const actor: Actor = { id: this.#nextId++, kind, label, parkedAt: undefined, state: 'running', meta };
    this.#actors.push(actor);
    const settled = new Promise<void>((resolve) => {
      actor.settled = resolve;
    });
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
      actor.settled?.();
    });
    await settled;
    return actor;
  }

  /** Lets a parked actor go on to its next yield point (or its end). */
  async step(actor: Actor): Promise<void> {
    if (actor.state !== 'parked' || actor.wake === undefined) return;
    const settled = new Promise<void>((resolve) => {
      actor.settled = resolve;
    });
    const wake = actor.wake;
    actor.wake = undefined;
    actor.state = 'running';
    actor.parkedAt = undefined;
    wake();
    await settled;
  }

  /** Kills a parked actor: it never goes on, as a process that died at this point. */
  kill(actor: Actor): void {
    if (actor.state !== 'parked') return;
    actor.state = 'killed';
    actor.wake = undefined;
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

  /** Parks the calling actor here until the simulation steps it; outside an actor, goes on at once. */
  yieldPoint(label: string): Promise<void> {
    const actor = this.#als.getStore();
    if (actor === undefined) return Promise.resolve();
    return new Promise<void>((resolve) => {
      actor.state = 'parked';
      actor.parkedAt = label;
      actor.wake = resolve;
      actor.settled?.();
    });
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
}
