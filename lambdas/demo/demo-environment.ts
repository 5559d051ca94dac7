/** The demo as a user of the receiver: its action and ledger modules, and the one setting they read. */
import { fileURLToPath } from 'node:url';
import { requireEnv } from '../config/env.ts';
import type { ActionSource } from '../config/route-config.ts';

/** The variable the app (and the local stack) sets to the demo ledger table's name. */
export const DEMO_LEDGER_TABLE_ENV = 'RETRYPROOF_LEDGER_TABLE';

export function demoLedgerTable(env: NodeJS.ProcessEnv = process.env): string {
  return requireEnv(DEMO_LEDGER_TABLE_ENV, env);
}

/** `.ts` from the sources, `.js` from the compiled package. */
const EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** The demo's `payout` action and its ledger, as modules like a user's own. */
export const DEMO_ACTION_SOURCE: ActionSource = {
  entry: fileURLToPath(new URL(`./payout-action${EXTENSION}`, import.meta.url)),
  ledger: fileURLToPath(new URL(`./payout-ledger${EXTENSION}`, import.meta.url)),
};
