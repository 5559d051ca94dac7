/** `retryproof routes list` fits its table in 100 columns: a breaker's long reason is cut with an ellipsis, whole in --json. */
import { describe, expect, it } from 'vitest';
import { ROUTES_TABLE_COLUMNS, routesTable } from '../../cli/commands/routes.ts';

const REASON = 'key "order-1001" came back 3 times after we had answered it (4 deliveries), reaching the route\'s threshold of 3';

describe('routes list, the routes table', () => {
  it('cuts a paused route\'s reason with an ellipsis so that every line fits 100 columns, the queue column before it', () => {
    // Act
    const text = routesTable([
      { route: 'demo', state: 'paused', pausedAt: Date.UTC(2026, 10, 30, 23, 40, 36), pausedBy: 'circuit-breaker', reason: REASON, queueKind: 'shared' },
      { route: 'demo-shopify', state: 'active', queueKind: 'own' },
    ]);
    // Assess
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^route +state +since +by +queue +reason$/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(ROUTES_TABLE_COLUMNS);
    expect(lines[1]).toMatch(/^demo +paused +2026-11-30 23:40:36 +circuit-breaker +shared +key "order-1001" came back .*…$/);
    expect(lines[1]?.length).toBe(ROUTES_TABLE_COLUMNS);
    expect(lines[2]).toMatch(/^demo-shopify +active +- +own$/);
  });

  it('leaves a reason that fits whole', () => {
    const text = routesTable([{ route: 'demo', state: 'paused', pausedAt: 0, pausedBy: 'operator', reason: 'maintenance', queueKind: 'shared' }]);
    expect(text.split('\n')[1]).toMatch(/ maintenance$/);
  });
});
