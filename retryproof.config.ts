/**
 * The route configuration of this deployment. `cdk synth`, the Lambdas and the local
 * stack all read this one object; it is validated at synth, so a mistake never deploys.
 * See docs/routes.md.
 */
import type { RetryproofConfig } from './lambdas/config/route-config.ts';

export const config: RetryproofConfig = {
  routes: [
    {
      // The demo: Standard Webhooks signatures and the demo payout action on a demo ledger.
      name: 'demo',
      signature: { scheme: 'standard-webhooks' },
      secretName: 'retryproof/demo',
      action: 'payout',
      actionTimeSeconds: 15,
      keepHeaders: ['content-type'],
      breakerThreshold: 3,
      breakerReaction: 'pause',
    },
    {
      // Stripe: the key is the event's `id`; Stripe retries live events for up to 3 days.
      name: 'stripe',
      signature: { scheme: 'stripe' },
      secretName: 'retryproof/stripe',
      action: 'payout',
      actionTimeSeconds: 15,
      keepHeaders: ['content-type'],
    },
  ],
  queue: { batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 5 },
  reconciliation: { windowHours: 24, everyMinutes: 60, settleSeconds: 300, stuckAfterSeconds: 900 },
  api: { throttlingRateLimit: 200, throttlingBurstLimit: 400 },
  demo: true,
};
