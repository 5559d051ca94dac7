/**
 * The multi-region example's receiver: one route, `orders`, on two replica Regions and a
 * witness, all on one MRSC global table, so a delivery's key is claimed once whichever
 * Region its copies land in. app.ts builds one stack per replica from `config`.
 */
import { fileURLToPath } from 'node:url';
import type { RetryproofConfig } from 'retryproof';

/** Paths of the app's own modules, wherever the command runs from. */
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export const config = {
  routes: [
    {
      name: 'orders',
      // The shop signs each delivery the Standard Webhooks way; its webhook-id is the key, the
      // same whichever Region a copy reaches. No Region in a key: it would make one event two.
      signature: { scheme: 'standard-webhooks' },
      // Created in us-east-1 and replicated by Secrets Manager to us-east-2: set it once.
      secretName: 'multi-region/orders',
      action: 'forwardOrder',
      actionTimeSeconds: 10,
    },
  ],
  actions: {
    forwardOrder: { entry: here('./src/forward-order.ts') },
  },
  // The first replica's stack defines the table and deploys first; the witness only votes.
  regions: { replicas: ['us-east-1', 'us-east-2'], witness: 'us-west-2' },
  alarmEmail: 'orders-oncall@example.com',
} satisfies RetryproofConfig;
