/**
 * The example's action: forwards each order to the orders API, with the delivery's
 * idempotency key as the API's own `Idempotency-Key`, so that a run repeated after a crash
 * (in either Region) places the order once. ORDERS_API_URL is set by app.ts.
 */
import type { Action } from 'retryproof/actions';
import { PermanentActionError, RetryableActionError } from 'retryproof/actions';

/** The variable app.ts sets on each Region's executor. */
export const ORDERS_API_URL_ENV = 'ORDERS_API_URL';

const forwardOrder: Action = async (ctx) => {
  const base = process.env[ORDERS_API_URL_ENV];
  if (base === undefined || base === '') throw new PermanentActionError(`${ORDERS_API_URL_ENV} is not set`);
  const response = await fetch(new URL('/orders', base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
    body: JSON.stringify(ctx.body),
    signal: ctx.signal,
  });
  // A throttle or a server error may pass; any other refusal will not.
  if (response.status === 429 || response.status >= 500) throw new RetryableActionError(`the orders API answered ${response.status}`);
  if (!response.ok) throw new PermanentActionError(`the orders API refused the order with ${response.status}`);
  return { forwarded: response.status };
};
export default forwardOrder;
