/**
 * `AbortSignal.timeout` on simulated time. The executor bounds an action with
 * `AbortSignal.timeout(budget)`; on real timers such a signal never fires within a run, which
 * takes milliseconds of real time for hours of simulated time. Inside an actor of a run that
 * installed a SimTimers, the signal is aborted instead once the simulated clock passes its
 * creation instant plus its timeout (a monotonic timer: true time, whatever the machine's
 * wall clock says). Outside every run's actors, the real `AbortSignal.timeout` serves.
 */

/** The timers of one run. */
export class SimTimers {
  readonly #now: () => number;
  readonly #inActor: () => boolean;
  readonly #pending: { readonly dueMs: number; readonly controller: AbortController }[] = [];

  /**
   * @param now the run's true simulated instant
   * @param inActor whether the current call comes from one of this run's actors
   */
  constructor(now: () => number, inActor: () => boolean) {
    this.#now = now;
    this.#inActor = inActor;
  }

  /** Puts this run's timers in place; returns the function that takes them away. */
  install(): () => void {
    INSTALLED.add(this);
    return () => {
      INSTALLED.delete(this);
    };
  }

  /** Aborts every signal whose time has come. Called whenever the simulated clock moves or an actor is stepped. */
  fire(): void {
    const now = this.#now();
    for (let i = this.#pending.length - 1; i >= 0; i--) {
      const timer = this.#pending[i];
      if (timer === undefined || timer.dueMs > now) continue;
      this.#pending.splice(i, 1);
      const reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
      FIRED_AT.set(reason, timer.dueMs);
      timer.controller.abort(reason);
    }
  }

  /** The instant the earliest pending signal fires, if any is pending. */
  nextDueMs(): number | undefined {
    let next: number | undefined;
    for (const timer of this.#pending) if (next === undefined || timer.dueMs < next) next = timer.dueMs;
    return next;
  }

  /** @internal */
  owns(): boolean {
    return this.#inActor();
  }

  /** @internal */
  timeout(ms: number): AbortSignal {
    const controller = new AbortController();
    this.#pending.push({ dueMs: this.#now() + ms, controller });
    return controller.signal;
  }
}

/** The simulated instant each fired timer was due, by its abort reason (which AbortSignal.any passes on). */
const FIRED_AT = new WeakMap<object, number>();

/**
 * When an aborted signal's simulated timer was due: the instant its waiter would have woken,
 * however much later the clock was moved past it. Undefined for a signal aborted otherwise.
 */
export function firedAt(signal: AbortSignal): number | undefined {
  const reason: unknown = signal.reason;
  return signal.aborted && typeof reason === 'object' && reason !== null ? FIRED_AT.get(reason) : undefined;
}

const INSTALLED = new Set<SimTimers>();
const realTimeout = AbortSignal.timeout.bind(AbortSignal);

AbortSignal.timeout = (ms: number): AbortSignal => {
  for (const timers of INSTALLED) if (timers.owns()) return timers.timeout(ms);
  return realTimeout(ms);
};
