/** `retryproof routes list` fits its table in 100 columns: a breaker's long reason is cut with an ellipsis, whole in --json. */
import { describe, expect, it } from 'vitest';
import { depthsTable, ROUTES_TABLE_COLUMNS, routesTable } from '../../cli/commands/routes.ts';

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

describe('routes list, the queues table', () => {
  it("puts the routes a queue carries last, cut with an ellipsis so that every line fits 100 columns", () => {
    // Prepare: the shared queue of the walk-through's eight routes.
    const routes = ['stripe', 'demo', 'demo-stripe', 'demo-github', 'demo-shopify', 'demo-slack', 'demo-hmac', 'demo-v1a'];
    // Act
    const lines = depthsTable([
      { queue: 'retryproof-work', kind: 'shared', routes, visible: 0, inFlight: 0, delayed: 0 },
      { queue: 'retryproof-work-dlq', kind: 'dlq', routes: [], visible: 1, inFlight: 0, delayed: 0 },
    ]).split('\n');
    // Assess
    expect(lines[0]).toMatch(/^queue +visible +in flight +delayed +carries$/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(ROUTES_TABLE_COLUMNS);
    expect(lines[1]).toMatch(/^retryproof-work +0 +0 +0 +stripe, demo, demo-stripe, .*…$/);
    expect(lines[2]).toMatch(/^retryproof-work-dlq +1 +0 +0 +dead letters \(DLQ\)$/);
  });
});
