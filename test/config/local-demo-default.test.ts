/**
 * The shipped configuration deploys no demo, yet `npm start` on it is the walk-through: the
 * local stack turns the demo on by itself, unless the configuration says `demo: false`.
 */
import { describe, expect, it } from 'vitest';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { DEMO_ACTION_SOURCE } from '../../lambdas/demo/demo-environment.ts';
import { DEMO_ROUTE, localDemoOf, readLocalSettings } from '../../local/local-settings.ts';
import { config } from '../../retryproof.config.ts';

describe('the local stack on the shipped retryproof.config.ts', () => {
  it('runs the demo: the demo route, its payout and the demo ledger, beside the configuration\'s own routes', () => {
    // Act
    const s = readLocalSettings({}, config, '/work');
    // Assess
    expect(config.demo).toBeUndefined();
    expect(localDemoOf(config)).toBe(true);
    expect(s.config.demo).toBe(true);
    expect(s.config.routes.map((r) => r.name)).toContain(DEMO_ROUTE);
    expect(s.config.routes.map((r) => r.name)).toContain('stripe');
    expect(s.config.routes.find((r) => r.name === DEMO_ROUTE)).toMatchObject({ action: 'payout', breakerThreshold: 3, breakerReaction: 'pause' });
    expect(s.actions.payout).toEqual(DEMO_ACTION_SOURCE);
    expect(s.actions.handleStripeEvent?.entry).toBe('/work/actions/handle-stripe-event.ts');
  });

  it('keeps the demo off for a configuration that says demo: false', () => {
    // Prepare
    const off: RetryproofConfig = { ...config, demo: false };
    // Act
    const s = readLocalSettings({}, off, '/work');
    // Assess
    expect(localDemoOf(off)).toBe(false);
    expect(s.config.demo).toBe(false);
    expect(s.config.routes.map((r) => r.name)).toEqual(['stripe']);
    expect(s.actions.payout).toBeUndefined();
  });
});
