/**
 * The settings the orders-app's own code reads. The CDK stack sets them on the executor and
 * the reconciler (orders-stack.ts); the local stack gets them from `localSetup`
 * (retryproof.config.ts).
 */
export const ORDERS_ENV = {
  /** The orders ledger table: place-order.ts posts to it, the reconciler reads it. */
  ledgerTable: 'ORDERS_LEDGER_TABLE',
  /** The downstream orders API's base URL: place-order.ts places orders there, and the ledger's `reverse` cancels them. */
  apiUrl: 'ORDERS_API_URL',
} as const;

/**
 * Reads a setting. Called at module scope, so a missing one fails the function's cold start,
 * naming the variable, instead of every delivery.
 * @throws Error naming the variable
 */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`environment variable ${name} is not set`);
  return value;
}
