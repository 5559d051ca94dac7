/**
 * The contract between the executor and a route's action. An action is where the effect
 * happens (a payout, an e-mail, a call to another API); the executor makes it happen once.
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
  /** The parsed JSON body, or the raw text when the body is not JSON. */
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Epoch milliseconds after which the attempt is abandoned; the lease ends no earlier. */
  readonly deadline: number;
  /** Aborted at the deadline. Pass it to fetch and to anything else that can be cancelled. */
  readonly signal: AbortSignal;
}

/** A small JSON-serialisable result, stored on the completed record (at most 1 KB kept). */
export type ActionResult = Readonly<Record<string, unknown>> | undefined;

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
