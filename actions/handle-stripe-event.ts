/**
 * TEMPLATE: your action for the `stripe` route. Edit this file (or point the route at a file
 * of your own in retryproof.config.ts); it is not the demo's payout and it moves no money.
 *
 * The executor runs it once in effect per Stripe event id. It runs again, with the same
 * `ctx.idempotencyKey`, whenever a run may not have finished, so pass that key to whatever
 * you call (a payment API's `Idempotency-Key` header, say) and honour `ctx.signal`:
 * docs/your-code.md lists the rules, and why each.
 */
// In a project of your own that installed the package: `from 'retryproof/actions'`.
import type { Action } from '../lambdas/actions/index.ts';
import { PermanentActionError } from '../lambdas/actions/index.ts';

/** The part of a Stripe event this template reads (https://docs.stripe.com/api/events/object). */
interface StripeEvent {
  readonly id: string;
  readonly type: string;
}

function isStripeEvent(body: unknown): body is StripeEvent {
  const b = body as Partial<StripeEvent> | null;
  return typeof b === 'object' && b !== null && typeof b.id === 'string' && typeof b.type === 'string';
}

const handleStripeEvent: Action = (ctx) => {
  if (!isStripeEvent(ctx.body)) {
    // Retrying a body that is not an event cannot help: dead-letter it for a person.
    return Promise.reject(new PermanentActionError('the body is not a Stripe event (no id or type)'));
  }
  // Replace this with your effect, e.g. fulfil the order of a `checkout.session.completed`:
  //   await fetch(url, { method: 'POST', headers: { 'Idempotency-Key': ctx.idempotencyKey }, signal: ctx.signal, body });
  return Promise.resolve({ handled: ctx.body.type });
};

export default handleStripeEvent;
