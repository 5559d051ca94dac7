/**
 * The executor's route states, cached per container (protocol v4): a worker at rest reads its
 * route's state once per ROUTE_STATE_MAX_AGE_MS, not once per batch, and a pause reaches the
 * workers at most that late. Runs on DynamoDB Local; the container's clock is injected.
 */
import { describe, expect, inject, it } from 'vitest';
import { ROUTE_STATE_MAX_AGE_MS } from '../../lambdas/config/route-config.ts';
import { RoutePauseCache } from '../../lambdas/executor/route-pauses.ts';
import type { RouteStateStore } from '../../lambdas/ports/route-state-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';

/** The real store on DynamoDB Local, its reads counted; `failNext` makes the next read fail before it is sent (a fault injected here). */
function countedStore() {
  const real = new DynamoDbRouteStateStore(localDynamoClient(inject('dynamoEndpoint')), inject('eventsTable'));
  const counted = { reads: 0, failNext: false };
  const store: RouteStateStore = {
    get: (route) => {
      counted.reads++;
      if (counted.failNext) {
        counted.failNext = false;
        return Promise.reject(new Error('DynamoDB unavailable'));
      }
      return real.get(route);
    },
    pause: (route, request) => real.pause(route, request),
    resume: (route, at) => real.resume(route, at),
  };
  return { store, counted };
}

const uniqueRoute = (): string => `cache-${Math.random().toString(36).slice(2, 10)}`;

describe('RoutePauseCache', () => {
  it('reads a route once per max age, so a pause made after the read reaches the workers when the age runs out', async () => {
    // Prepare: an active route, read once by the container.
    const { store, counted } = countedStore();
    let clock = 1_000;
    const pauses = new RoutePauseCache(store, { maxAgeMs: ROUTE_STATE_MAX_AGE_MS, monotonicNow: () => clock });
    const route = uniqueRoute();
    expect(await pauses.isPaused(route)).toBe(false);
    // Act: the route is paused; the workers ask just before and just as the state's age runs out.
    await store.pause(route, { reason: 'test', at: Date.now(), by: 'operator' });
    clock += ROUTE_STATE_MAX_AGE_MS - 1;
    const justBefore = await pauses.isPaused(route);
    clock += 1;
    const atTheAge = await pauses.isPaused(route);
    // Assess: the cached state until its age, the pause from then on, with one read each.
    expect([justBefore, atTheAge]).toEqual([false, true]);
    expect(counted.reads).toBe(2);
  });

  it('answers the concurrent records of a batch with one read', async () => {
    const { store, counted } = countedStore();
    const pauses = new RoutePauseCache(store, { maxAgeMs: ROUTE_STATE_MAX_AGE_MS, monotonicNow: () => 0 });
    const route = uniqueRoute();
    await store.pause(route, { reason: 'test', at: Date.now(), by: 'operator' });
    const answers = await Promise.all(Array.from({ length: 10 }, () => pauses.isPaused(route)));
    expect(answers).toEqual(Array.from({ length: 10 }, () => true));
    expect(counted.reads).toBe(1);
  });

  it('forgets a failed read, so the next record reads again instead of failing for the whole age', async () => {
    const { store, counted } = countedStore();
    const pauses = new RoutePauseCache(store, { maxAgeMs: ROUTE_STATE_MAX_AGE_MS, monotonicNow: () => 0 });
    const route = uniqueRoute();
    counted.failNext = true;
    await expect(pauses.isPaused(route)).rejects.toThrow('DynamoDB unavailable');
    expect(await pauses.isPaused(route)).toBe(false);
    expect(counted.reads).toBe(2);
  });

  it('reads at every decision with no age, as the specs that pause and look at once use it', async () => {
    const { store, counted } = countedStore();
    const pauses = new RoutePauseCache(store, { maxAgeMs: 0, monotonicNow: () => 0 });
    const route = uniqueRoute();
    expect(await pauses.isPaused(route)).toBe(false);
    await store.pause(route, { reason: 'test', at: Date.now(), by: 'operator' });
    expect(await pauses.isPaused(route)).toBe(true);
    expect(counted.reads).toBe(2);
  });
});
