/**
 * The orders API's cancel call, which the orders ledger's `reverse` makes: a reversal of a
 * booked order is worth nothing unless the order itself is undone.
 */

/** Cancels one order. Resolves once the API says it is cancelled (now or before). */
export type CancelOrder = (orderId: string) => Promise<void>;

/** How long one cancel may take: the reconciler has a whole window to get through. */
const CANCEL_TIMEOUT_MS = 10_000;

/**
 * `POST <apiUrl>/orders/<orderId>/cancel`. The API answers 200 for an order it cancelled now
 * or earlier, so a cancel repeated after a crash, or by two reconcilers at once, is harmless.
 * @throws Error for any other answer, or none: the order may still stand, so its entry must too
 */
export function cancelOrderWithApi(apiUrl: string): CancelOrder {
  return async (orderId) => {
    const response = await fetch(`${apiUrl.replace(/\/+$/, '')}/orders/${encodeURIComponent(orderId)}/cancel`, {
      method: 'POST',
      signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`the orders API did not cancel ${orderId}: ${response.status} ${text.slice(0, 200)}`);
  };
}
