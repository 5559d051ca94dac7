/** The user's modules, as the generated entries and the local stack hand them over. */
import { describe, expect, it } from 'vitest';
import { actionRegistryOf, ledgersOf } from '../../lambdas/actions/action-modules.ts';

const action = () => Promise.resolve(undefined);
const ledger = { post: action, listWindow: action, reverse: action };

describe('action modules', () => {
  it('takes each module\'s default export as the action, by the name routes give it', () => {
    const registry = actionRegistryOf({ placeOrder: { default: action }, notify: { default: action, other: 1 } });
    expect([...registry.keys()]).toEqual(['placeOrder', 'notify']);
    expect(registry.get('placeOrder')).toBe(action);
  });

  it('refuses a module whose default export is not a function, naming the action', () => {
    expect(() => actionRegistryOf({ placeOrder: { action } })).toThrow(
      'action "placeOrder": its module\'s default export must be the action, a function (ctx) => Promise<result>; found undefined',
    );
    expect(() => actionRegistryOf({ notify: { default: { run: action } } })).toThrow(/action "notify": .* found object$/);
  });

  it('takes each ledger module\'s default export, and names the calls a ledger lacks', () => {
    expect(ledgersOf({ placeOrder: { default: ledger } }).get('placeOrder')).toBe(ledger);
    expect(() => ledgersOf({ placeOrder: { default: { post: action } } })).toThrow(
      'action "placeOrder": its ledger module\'s default export must be a ledger with post, listWindow and reverse; missing listWindow, reverse',
    );
    expect(() => ledgersOf({ placeOrder: {} })).toThrow(/missing post, listWindow, reverse$/);
  });
});
