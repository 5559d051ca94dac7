/**
 * The route configuration of this deployment. `cdk synth`, the Lambdas and the local
 * stack all read this one object; it is validated at synth, so a mistake never deploys.
 * See docs/routes.md.
 *
 * Safe by default: this deploys no demo. `npm start` (the local stack) turns the demo and
 * its `demo` routes on by itself; set `demo: true` here only to deploy the demo's payout
 * action and its ledger table too, never in front of real senders.
 */
import type { RetryproofConfig } from './lambdas/config/route-config.ts';

export const config: RetryproofConfig = {
  routes: [
    {
      // Stripe: the key is the event's `id`; Stripe retries live events for up to 3 days.
      // The secret is named `<namePrefix>/stripe` in Secrets Manager (the name
      // prefix is the stack's, `Retryproof` or `Retryproof-<stage>`): put Stripe's signing
      // secret there after the first deploy.
      name: 'stripe',
      signature: { scheme: 'stripe' },
      secretName: 'stripe',
      action: 'handleStripeEvent',
      actionTimeSeconds: 15,
      keepHeaders: ['content-type'],
    },
  ],
  actions: {
    // A template to edit: actions/handle-stripe-event.ts.
    handleStripeEvent: { entry: 'actions/handle-stripe-event.ts' },
  },
  queue: { batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 5 },
  reconciliation: { windowHours: 24, everyMinutes: 60, settleSeconds: 300, stuckAfterSeconds: 900 },
  api: { throttlingRateLimit: 200, throttlingBurstLimit: 400 },
};
