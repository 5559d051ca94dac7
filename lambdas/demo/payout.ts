/**
 * The demo payments action, deployed only with `demo: true`. It posts one ledger entry per
 * execution and is on purpose NOT idempotent, so a double execution shows as two entries.
 * On the demo routes only (`demo`, and the local stack's `demo-<scheme>`), the body's
 * `simulate` field drives the failure modes a user can try; on any other route (the
 * shipped `stripe` route, say) it is ignored, so nobody who can sign a delivery can slow
 * an executor or double an entry on purpose:
 *   {"failAttempts": n}        fail retryably on the first n attempts
 *   {"permanentError": true}   fail permanently
 *   {"permanentErrorRuns": n}  fail permanently on the first n runs (counted across redrives): the
 *                              downstream outage a person waits out, then redrives
 *   {"delayMs": n}             a slow action (the story's 35 s payout)
 *   {"crashAfterEffect": true} on attempt 1, post the entry, then die before completion
 */
import { PermanentActionError, RetryableActionError } from '../actions/action.ts';
import type { Action, ActionContext } from '../actions/action.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { dieAsWorker } from './worker-death.ts';

/** The routes whose deliveries may ask for a failure: the demo's own. */
export function honoursSimulate(route: string): boolean {
  return route === 'demo' || route.startsWith('demo-');
}

interface PayoutBody {
  readonly amount?: unknown;
  readonly currency?: unknown;
  readonly simulate?: {
    readonly failAttempts?: unknown;
    readonly permanentError?: unknown;
    readonly permanentErrorRuns?: unknown;
    readonly delayMs?: unknown;
    readonly crashAfterEffect?: unknown;
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new RetryableActionError('the action ran past its deadline'));
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new RetryableActionError('the action ran past its deadline'));
      },
      { once: true },
    );
  });
}

/**
 * Builds the payout action over a ledger. `simulateOn` picks the routes whose deliveries
 * may ask for a failure: the demo's own, unless a test says otherwise.
 */
export function payoutAction(ledger: Ledger, now: () => number = Date.now, simulateOn: (route: string) => boolean = honoursSimulate): Action {
  return async (ctx: ActionContext) => {
    const body = (ctx.body ?? {}) as PayoutBody;
    const amount = body.amount ?? 0;
    const currency = body.currency ?? 'EUR';
    if (typeof amount !== 'number' || !Number.isFinite(amount)) {
      throw new PermanentActionError('payout: "amount" must be a number');
    }
    if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) {
      throw new PermanentActionError('payout: "currency" must be a three-letter code');
    }
    const simulate = simulateOn(ctx.route) ? (body.simulate ?? {}) : {};
    if (typeof simulate.delayMs === 'number' && simulate.delayMs > 0) await sleep(simulate.delayMs, ctx.signal);
    if (simulate.permanentError === true) throw new PermanentActionError('simulated permanent error');
    // ctx.attempt is the run number across redrives: a redrive's run is past the outage.
    if (typeof simulate.permanentErrorRuns === 'number' && ctx.attempt <= simulate.permanentErrorRuns) {
      throw new PermanentActionError(`simulated permanent error on run ${ctx.attempt} (downstream down)`);
    }
    if (typeof simulate.failAttempts === 'number' && ctx.attempt <= simulate.failAttempts) {
      throw new RetryableActionError(`simulated retryable error on attempt ${ctx.attempt}`);
    }
    // The ledger keeps the sender's key beside the route: the reconciler matches entries to records by both.
    const entry = await ledger.post({ route: ctx.route, idempotencyKey: ctx.key, amount, currency, postedAt: now() });
    if (simulate.crashAfterEffect === true && ctx.attempt === 1) return dieAsWorker();
    return { entryId: entry.entryId, amount, currency };
  };
}
