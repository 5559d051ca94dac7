/**
 * The orders-app's receiver: one route, `orders`, whose deliveries run the app's own action
 * `placeOrder`. The CDK app (orders-stack.ts) builds a WebhookReceiver from `config`;
 * `npm start -- --config examples/orders-app/retryproof.config.ts` runs the same routes on
 * the local stack, after `localSetup` has made what the action needs there.
 */
import { fileURLToPath } from 'node:url';
import type { LocalSetup, RetryproofConfig } from 'retryproof';
import { startFakeOrdersApi } from './src/fake-orders-api.ts';
import { ensureOrdersLedgerTable } from './src/local-resources.ts';
import { ORDERS_ENV } from './src/orders-environment.ts';

/** Paths of the app's own modules, wherever the command runs from. */
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export const config = {
  routes: [
    {
      name: 'orders',
      // The shop signs each delivery the Standard Webhooks way; its webhook-id is the key.
      signature: { scheme: 'standard-webhooks' },
      secretName: 'orders-app/webhook',
      action: 'placeOrder',
      actionTimeSeconds: 10,
      // A key that comes back 5 times after we answered it 202 (a shop that never gets our
      // acknowledgements) pauses the route until someone resumes it. The default is 3.
      breakerThreshold: 5,
    },
  ],
  actions: {
    placeOrder: { entry: here('./src/place-order.ts'), ledger: here('./src/orders-ledger.ts') },
  },
  alarmEmail: 'orders-oncall@example.com',
} satisfies RetryproofConfig;

/** The orders ledger table's name in DynamoDB Local. */
export const LOCAL_LEDGER_TABLE = 'orders-app-ledger';

/**
 * Locally, before the action modules load: the ledger table in DynamoDB Local, and an orders
 * API, the one ORDERS_API_URL names, else a fake one in this process. Returns the variables
 * the action and ledger modules read.
 */
export const localSetup: LocalSetup = async ({ dynamo }) => {
  await ensureOrdersLedgerTable(dynamo, LOCAL_LEDGER_TABLE);
  let apiUrl = process.env[ORDERS_ENV.apiUrl];
  if (apiUrl === undefined || apiUrl === '') {
    const api = await startFakeOrdersApi({
      log: (line) => {
        process.stdout.write(`${line}\n`);
      },
    });
    process.stdout.write(`orders-app: fake orders API at ${api.url} (set ORDERS_API_URL to use another)\n`);
    apiUrl = api.url;
  }
  return { [ORDERS_ENV.ledgerTable]: LOCAL_LEDGER_TABLE, [ORDERS_ENV.apiUrl]: apiUrl };
};
