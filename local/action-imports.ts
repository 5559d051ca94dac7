/**
 * The user's action and ledger modules, imported by path as the local stack runs them: the
 * same modules the construct bundles into the executor and the reconciler, turned into the
 * registry and the ledgers by the same code (lambdas/actions/action-modules.ts). Node runs
 * a `.ts` module as it is (it strips the types of files outside node_modules).
 */
import { stat } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { actionRegistryOf, ledgersOf } from '../lambdas/actions/action-modules.ts';
import type { ActionRegistry } from '../lambdas/actions/action-registry.ts';
import type { ActionSource } from '../lambdas/config/route-config.ts';
import type { Ledger } from '../lambdas/ledger/ledger.ts';
import { SettingsError } from './local-settings.ts';

export interface ImportedActions {
  readonly actions: ActionRegistry;
  /** The ledgers of the actions that declare one, by action name. */
  readonly ledgers: ReadonlyMap<string, Ledger>;
}

async function assertFile(action: string, field: 'entry' | 'ledger', path: string): Promise<void> {
  const found = await stat(path).catch(() => undefined);
  if (found?.isFile() !== true) throw new SettingsError(`action "${action}": its ${field} ${path} is not a file`);
}

/**
 * Checks that every module is there, without loading any: `npm start` calls it before it
 * starts anything, so a mistyped path fails in milliseconds.
 * @throws SettingsError naming the action and the path
 */
export async function assertActionFiles(sources: Readonly<Record<string, ActionSource>>): Promise<void> {
  for (const [name, source] of Object.entries(sources)) {
    await assertFile(name, 'entry', source.entry);
    if (source.ledger !== undefined) await assertFile(name, 'ledger', source.ledger);
  }
}

async function importModule(action: string, field: 'entry' | 'ledger', path: string): Promise<unknown> {
  await assertFile(action, field, path);
  try {
    return await import(pathToFileURL(path).href);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new SettingsError(`action "${action}": its ${field} ${path} could not be loaded: ${message.split('\n')[0] ?? ''}`);
  }
}

/**
 * Imports every action's module, and its ledger's when it has one, one after another (a
 * module reads its environment as it loads; the order is the configuration's).
 * @param sources absolute paths, by action name
 * @throws SettingsError of one line naming the action: a module missing, failing to load,
 *   or of the wrong shape
 */
export async function importActions(sources: Readonly<Record<string, ActionSource>>): Promise<ImportedActions> {
  const actionModules: Record<string, unknown> = {};
  const ledgerModules: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(sources)) {
    actionModules[name] = await importModule(name, 'entry', source.entry);
    if (source.ledger !== undefined) ledgerModules[name] = await importModule(name, 'ledger', source.ledger);
  }
  try {
    return { actions: actionRegistryOf(actionModules), ledgers: ledgersOf(ledgerModules) };
  } catch (error) {
    throw new SettingsError((error as Error).message);
  }
}
