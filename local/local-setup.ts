/**
 * What a configuration file may export beside `config`, for `npm start` only: a function
 * that prepares, on the local services, what the user's own action and ledger modules need
 * (their ledger table, say), and returns the environment those modules read. When deployed,
 * the user's CDK stack creates those resources and sets that environment; locally nobody
 * else does.
 *
 *   export async function localSetup(local: LocalServices): Promise<Record<string, string>> {
 *     await createOrdersTable(local.dynamo, 'orders-ledger');
 *     return { ORDERS_LEDGER_TABLE: 'orders-ledger' };
 *   }
 */
import type { LocalServices, LocalSetup } from '../lambdas/config/config-file.ts';

export type { LocalServices, LocalSetup };

/** `localSetup` failed: the user's code threw or rejected. */
export class LocalSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LocalSetupError';
  }
}

/**
 * Runs a configuration file's `localSetup` and checks what it returns.
 * @param configFile the file, for messages
 * @returns the variables to set for the user's modules
 * @throws LocalSetupError when it throws, or when it returns anything but an object of strings
 */
export async function runLocalSetup(setup: LocalSetup, local: LocalServices, configFile: string): Promise<Readonly<Record<string, string>>> {
  let variables: unknown;
  try {
    variables = await setup(local);
  } catch (error) {
    throw new LocalSetupError(`localSetup of ${configFile} failed: ${(error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''}`, {
      cause: error,
    });
  }
  if (variables === undefined) return {};
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    throw new LocalSetupError(`localSetup of ${configFile} must return an object of environment variables; it returned ${Array.isArray(variables) ? 'an array' : typeof variables}`);
  }
  for (const [name, value] of Object.entries(variables)) {
    if (typeof value !== 'string') {
      throw new LocalSetupError(`localSetup of ${configFile} returned ${name} as ${typeof value}; environment variables are strings`);
    }
  }
  return variables as Record<string, string>;
}
