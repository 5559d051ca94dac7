/**
 * The orders-app's action, `placeOrder`: retryproof runs it once per delivery key, however
 * often the sender retries. It places the order with the downstream orders API under
 * `ctx.idempotencyKey`, then books that order in the app's own ledger. It keeps retryproof's
 * contract for an action (lambdas/actions/action.ts):
 *
 * - It honours `ctx.signal`: the API call and the booking are aborted at the deadline, and
 *   nothing is left running when it returns or throws.
 * - The entry exists if and only if the order does. A run that fails before the order is
 *   placed (a 503, a timeout) books nothing; a run that dies after the API took the order
 *   books nothing either, and the next run gets the same order back (the API honours the
 *   key) and books it then. An order is booked once, under an id derived from it, so a run
 *   that dies after booking leaves the next run nothing to book twice.
 * - The orders API must remember `ctx.idempotencyKey` for as long as retryproof may run the
 *   delivery again: the README's "The contract for your code" says how long that is.
 */
import { PermanentActionError, RetryableActionError } from 'retryproof/actions';
import type { Action, ActionContext } from 'retryproof/actions';
import type { OrdersLedger } from './order-entry.ts';
import { ORDERS_ENV, requireEnv } from './orders-environment.ts';
import ordersLedger from './orders-ledger.ts';

/** What a delivery asks for: an order total in minor units. */
interface Order {
  readonly amount: number;
  readonly currency: string;
}

/** @throws PermanentActionError when the body is no order: no retry can fix it */
function orderOf(body: unknown): Order {
  const { amount, currency } = (body ?? {}) as { amount?: unknown; currency?: unknown };
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) {
    throw new PermanentActionError('placeOrder: "amount" must be a positive whole number of minor units');
  }
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) {
    throw new PermanentActionError('placeOrder: "currency" must be a three-letter code');
  }
  return { amount, currency };
}

/**
 * Places the order with the orders API under the run's idempotency key.
 * @throws RetryableActionError for a timeout, a network failure, a 5xx, a 409 or a 429
 * @throws PermanentActionError for any other 4xx: the API will refuse this order every time
 */
async function placeWithApi(apiUrl: string, ctx: ActionContext, order: Order): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${apiUrl.replace(/\/+$/, '')}/orders`, {
      method: 'POST',
      // The same key on every run of this delivery: a second run gets the first run's order.
      headers: { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
      body: JSON.stringify({ ...order, reference: ctx.key }),
      signal: ctx.signal,
    });
  } catch (error) {
    // Aborted at the deadline, or never answered: the order may exist; the next run finds out.
    throw new RetryableActionError(`the orders API did not answer: ${(error as Error).message}`, { cause: error });
  }
  const text = await response.text();
  // 409: a request under this key is still in flight; 429: throttled. Both pass.
  if (response.status >= 500 || response.status === 409 || response.status === 429) {
    throw new RetryableActionError(`the orders API answered ${response.status}: ${text.slice(0, 200)}`);
  }
  if (!response.ok) throw new PermanentActionError(`the orders API refused the order: ${response.status} ${text.slice(0, 200)}`);
  let orderId: unknown;
  try {
    ({ orderId } = JSON.parse(text) as { orderId?: unknown });
  } catch {
    orderId = undefined;
  }
  if (typeof orderId !== 'string') {
    // Not retried (the API would replay the same answer), and not booked (no order to name): a person must look.
    throw new PermanentActionError(`the orders API answered ${response.status} without an orderId: the order may stand unbooked`);
  }
  return orderId;
}

/** The action over a ledger and an orders API, passed in so a test can give it others. */
export function placeOrderAction(ledger: OrdersLedger, apiUrl: string, now: () => number = Date.now): Action {
  return async (ctx) => {
    const order = orderOf(ctx.body);
    // The effect first: under ctx.idempotencyKey, a rerun gets the order an earlier run placed.
    const orderId = await placeWithApi(apiUrl, ctx, order);
    // Then its entry, so an entry exists only for an order that does. The ledger keeps the
    // sender's key (ctx.key) and the run (ctx.attempt) beside the route: the reconciler
    // matches entries to deliveries by them.
    const entry = await ledger.post(
      { route: ctx.route, idempotencyKey: ctx.key, attempt: ctx.attempt, orderId, ...order, postedAt: now() },
      { signal: ctx.signal },
    );
    return { orderId, entryId: entry.entryId };
  };
}

const placeOrder: Action = placeOrderAction(ordersLedger, requireEnv(ORDERS_ENV.apiUrl));
export default placeOrder;
