/**
 * assertActionsSupplied: a route naming an action nobody supplied would synthesize, start,
 * answer 202 and dead-letter every delivery; it is refused before anything starts.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, DEMO_ACTION, assertActionsSupplied, resolveConfig } from '../../lambdas/config/resolve-config.ts';

const resolved = resolveConfig({
  routes: [
    { name: 'stripe', signature: { scheme: 'stripe' }, secretName: 's/stripe', action: 'payout', actionTimeSeconds: 5 },
    { name: 'orders', signature: { scheme: 'github' }, secretName: 's/orders', action: 'log', actionTimeSeconds: 5 },
  ],
  actions: { log: { entry: 'src/actions/log.ts' } },
  demo: true,
});

describe('assertActionsSupplied', () => {
  it('passes when every route names a supplied action', () => {
    expect(() => {
      assertActionsSupplied(resolved, ['log', DEMO_ACTION]);
    }).not.toThrow();
  });

  it('names the route, the missing action, the actions supplied and how to add it', () => {
    expect(() => {
      assertActionsSupplied(resolved, [DEMO_ACTION]);
    }).toThrow(
      new ConfigError(
        'route "orders": action "log" is not supplied; the actions supplied are: payout ' +
          "(add it to actions: { log: { entry: 'src/actions/log.ts' } })",
      ),
    );
  });

  it('says so when no action is supplied at all', () => {
    expect(() => {
      assertActionsSupplied(resolved, []);
    }).toThrow(
      new ConfigError(
        'route "stripe": action "payout" is not supplied; the actions supplied are: none ' +
          "(add it to actions: { payout: { entry: 'src/actions/payout.ts' } })",
      ),
    );
  });
});
