/**
 * The contract between the executor and a route's action. An action is where the effect
 * happens (a payout, an e-mail, a call to another API); the executor makes it happen once.
 *
 * retryproof's guarantees hold for an action only if it keeps these rules (README, "The
 * contract for your code"; why each, in docs/your-code.md):
 *
 * 1. It honours `ctx.signal` and `ctx.deadline`, and leaves no background work. The signal
 *    goes to every call that takes one (fetch, the AWS SDK's `send(command, { abortSignal })`),
 *    and the action stops and throws once it fires. Everything it started is awaited before
 *    it returns or throws: Lambda freezes what is still running, and it may thaw in a later
 *    invocation while another worker holds the record. The executor does not abandon a slow
 *    action: an action that runs past its deadline runs past its lease, and a second worker
 *    may then run the same delivery beside it.
 * 2. Each ledger entry it posts exists if and only if its effect happened: post after the
 *    effect, or post first and remove or void the entry when the effect fails (and when the
 *    effect turns out to be an earlier run's, keep this run's entry and remove that run's:
 *    docs/your-code.md, rule 2). Put
 *    `attempt: ctx.attempt` on it. The reconciler keeps the entry of the run that completed
 *    the record and reverses the others, so an entry left without its effect would have it
 *    reverse the genuine one.
 * 3. The ledger's `reverse` undoes exactly that entry's effect, at most once; two entries
 *    never name one effect.
 * 4. The downstream remembers `ctx.idempotencyKey` for as long as the delivery may run again:
 *    until its record expires, which is the route's `ttlSeconds` after receipt (35 days by
 *    default) and at least MESSAGE_COVER_SECONDS (15 days) after any re-send, dead-letter copy
 *    or redrive. Without a person that is up to 50 days by default; each redrive a person may
 *    make adds up to 15 days, and a paused route its pause. A downstream that forgets sooner
 *    needs the action to find its earlier effect itself before it makes one again.
 *
 * An action runs again, with the same `ctx.idempotencyKey`, whenever a run may not have
 * finished: a retryable error, a worker that died, a lease that ran out. It never runs again
 * after its run completed.
 */

/** What an action gets for one attempt. */
export interface ActionContext {
  readonly route: string;
  /** The sender's key, as received. */
  readonly key: string;
  /**
   * Pass this downstream as the remote API's own idempotency key (for example a payment
   * provider's `Idempotency-Key`). It is the only way to stay exactly-once across a crash
   * between the effect and our completion write.
   */
  readonly idempotencyKey: string;
  /** The parsed JSON body, or the raw text when the body is not JSON (base64 text for a binary body). */
  readonly body: unknown;
  /**
   * The body's exact bytes, as the sender sent them and the ingest fingerprinted them (a large
   * body read back from the receiver's bucket included): for an action that checks or forwards
   * them unchanged.
   */
  readonly rawBody: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The run number: 1 for the first run, counted across redrives. Put it on the ledger entries
   * this run posts (`attempt: ctx.attempt`): the reconciler keeps the entry of the run that
   * completed the record.
   */
  readonly attempt: number;
  /**
   * Epoch milliseconds, by this worker's clock, by which the action must have returned or
   * thrown. The lease ends a margin after it, kept for the completion write; past the lease,
   * another worker may take the record and run the delivery too.
   */
  readonly deadline: number;
  /**
   * Aborted at the deadline. Pass it to fetch, to the AWS SDK (`send(command, { abortSignal })`)
   * and to anything else that can be cancelled, and stop once it fires; leave nothing running.
   */
  readonly signal: AbortSignal;
}

/** A small JSON-serialisable result, stored on the completed record (at most 1 KB kept). */
export type ActionResult = Readonly<Record<string, unknown>> | undefined;

/**
 * An action: a route's effect, run once per delivery key, and again with the same
 * `ctx.idempotencyKey` whenever a run may not have finished. See the rules above.
 */
export type Action = (ctx: ActionContext) => Promise<ActionResult>;

/** Throw this for a failure that may pass: a timeout, a 5xx, a throttle. The work is tried again. */
export class RetryableActionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RetryableActionError';
  }
}

/** Throw this for a failure that will not pass by retrying: invalid input, a refused payment. */
export class PermanentActionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PermanentActionError';
  }
}
