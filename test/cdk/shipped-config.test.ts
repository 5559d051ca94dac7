/**
 * Safe by default: retryproof.config.ts as shipped deploys no demo (no `demo` route, no demo
 * ledger, no demo warning); its `stripe` route runs the repository's template action, not the
 * demo's payout. The demo comes only with an explicit `demo: true`.
 */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { config } from '../../retryproof.config.ts';
import { demoConfig } from './fixtures/demo-config.ts';
import { synthesize } from './stack-fixture.ts';
import type { SynthesizedApp } from './stack-fixture.ts';

describe('the app built from the shipped retryproof.config.ts', () => {
  let built: SynthesizedApp;

  beforeAll(() => {
    built = synthesize(config);
  });

  it('has no demo route: its only route is stripe, on the template action actions/handle-stripe-event.ts', () => {
    const { routes, demo } = resolveConfig(config);
    expect(demo).toBe(false);
    expect(routes.map((r) => [r.name, r.action])).toEqual([['stripe', 'handleStripeEvent']]);
    expect(config.actions?.handleStripeEvent?.entry).toBe('actions/handle-stripe-event.ts');
    // No alarm, secret or other resource of a demo route.
    const ids = Object.keys(built.template.toJSON().Resources as Record<string, unknown>);
    expect(ids.filter((id) => /demo/i.test(id))).toEqual([]);
  });

  it('has no demo ledger: one table, the events table, and no ledger in the receiver descriptor', () => {
    expect(built.stack.node.tryFindChild('Ledger')).toBeUndefined();
    expect(Object.keys(built.template.findResources('AWS::DynamoDB::GlobalTable'))).toHaveLength(1);
    const descriptor = JSON.stringify(Object.values(built.template.findOutputs('*')).map((o: { Value?: unknown }) => o.Value));
    expect(descriptor).not.toContain('ledgerTable');
    for (const fn of Object.values(built.template.findResources('AWS::Lambda::Function'))) {
      const variables = (fn as { Properties: { Environment?: { Variables: Record<string, unknown> } } }).Properties.Environment?.Variables ?? {};
      expect(variables).not.toHaveProperty('RETRYPROOF_LEDGER_TABLE');
    }
  });

  it('warns of no demo at synth', () => {
    Annotations.fromStack(built.stack).hasNoWarning('*', Match.stringLikeRegexp('retryproof:demo-deployed'));
  });

  it('deploys the demo, its ledger and its warning only with an explicit demo: true', () => {
    const withDemo = synthesize(demoConfig);
    expect(withDemo.stack.node.tryFindChild('Ledger')).toBeDefined();
    expect(Annotations.fromStack(withDemo.stack).findWarning('*', Match.stringLikeRegexp('retryproof:demo-deployed'))).toHaveLength(1);
  });
});
