/**
 * The user's own code, as modules: an action module's default export is the action; a
 * ledger module's default export is that action's ledger. The construct bundles the
 * modules a configuration names into the executor and the reconciler (a generated entry
 * imports them), and the local stack imports them by path; both hand them here, where a
 * module of the wrong shape fails the cold start, naming the action.
 */
import type { Ledger } from '../ledger/ledger.ts';
import type { Action } from './action.ts';
import type { ActionRegistry } from './action-registry.ts';

/** Imported modules by action name, as `import * as m from '…'` gives them. */
export type ModulesByAction = Readonly<Record<string, unknown>>;

function defaultExport(module: unknown): unknown {
  return typeof module === 'object' && module !== null && 'default' in module ? module.default : undefined;
}

/**
 * The actions of the executor.
 * @throws Error naming the action whose module has no function as its default export
 */
export function actionRegistryOf(modules: ModulesByAction): ActionRegistry {
  const actions = new Map<string, Action>();
  for (const [name, module] of Object.entries(modules)) {
    const action = defaultExport(module);
    if (typeof action !== 'function') {
      throw new Error(`action "${name}": its module's default export must be the action, a function (ctx) => Promise<result>; found ${typeof action}`);
    }
    actions.set(name, action as Action);
  }
  return actions;
}

/**
 * The ledgers of the reconciler, by action name.
 * @throws Error naming the action whose ledger module lacks post, listWindow or reverse
 */
export function ledgersOf(modules: ModulesByAction): ReadonlyMap<string, Ledger> {
  const ledgers = new Map<string, Ledger>();
  for (const [name, module] of Object.entries(modules)) {
    const ledger = defaultExport(module) as Partial<Record<keyof Ledger, unknown>> | undefined;
    const missing = (['post', 'listWindow', 'reverse'] as const).filter((call) => typeof ledger?.[call] !== 'function');
    if (missing.length > 0) {
      throw new Error(`action "${name}": its ledger module's default export must be a ledger with post, listWindow and reverse; missing ${missing.join(', ')}`);
    }
    ledgers.set(name, ledger as Ledger);
  }
  return ledgers;
}
