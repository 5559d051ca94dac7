/**
 * The orders-app's action, `placeOrder`: retryproof runs it once per delivery key, however
 * often the sender retries. It books the order in the app's own ledger, then places it with
 * the downstream orders API under `ctx.idempotencyKey`. Should this run die after the API
 * took the order, the next run books a second entry but places no second order (the API
 * honours the key), and the reconciler reverses the extra entry.
 */
// A user writes `from 'retryproof/actions'`; inside this repository the example imports the source.
import { PermanentActionError, RetryableActionError } from '../../../lambdas/actions/index.ts';
import type { Action, ActionContext, Ledger } from '../../../lambdas/actions/index.ts';
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
  if (typeof orderId !== 'string') throw new PermanentActionError(`the orders API answered ${response.status} without an orderId`);
  return orderId;
}

/** The action over a ledger and an orders API, passed in so a test can give it others. */
export function placeOrderAction(ledger: Ledger, apiUrl: string, now: () => number = Date.now): Action {
  return async (ctx) => {
    const order = orderOf(ctx.body);
    // The ledger keeps the sender's key (ctx.key) beside the route: that is what the
    // reconciler matches entries to deliveries by.
    const entry = await ledger.post({ route: ctx.route, idempotencyKey: ctx.key, ...order, postedAt: now() });
    try {
      return { orderId: await placeWithApi(apiUrl, ctx, order) };
    } catch (error) {
      // A refused order was never placed: its booking must not stand.
      if (error instanceof PermanentActionError) {
        await ledger.reverse(entry.entryId, { reversalId: `refused-${entry.entryId}`, reason: error.message, at: now() });
      }
      throw error;
    }
  };
}

const placeOrder: Action = placeOrderAction(ordersLedger, requireEnv(ORDERS_ENV.apiUrl));
export default placeOrder;
