/** The keys of a run: most payable, some hopeless (every run fails retryably). */
import { deliveryId } from '../../lambdas/domain/event-record.ts';
import { bodyOf, destinationOf, sizeClassOf, smallSizeClassOf } from './delivery-bodies.ts';
import { prng } from './schedule.ts';
import { DAY, PAY_BODY_LIMIT, SMALL_BODY_LIMIT } from './sim-constants.ts';
import { customerOf } from './sim-ordering.ts';
import { ROUTE_NAMES } from './world.ts';
import type { World } from './world.ts';

export function drawKeys(w: World): void {
  const keyRandom = prng(w.seed ^ 0x6e75);
  // A rate-limited pay route gets half the keys, so its work meets its limit often.
  // So does an ordered one, so that its customers' lines hold several records.
  const routeOrder =
    w.shape.rate === undefined && !w.shape.ordered
      ? [ROUTE_NAMES.pay, ROUTE_NAMES.alt, ROUTE_NAMES.pay, ROUTE_NAMES.sw, ROUTE_NAMES.st]
      : [ROUTE_NAMES.pay, ROUTE_NAMES.alt, ROUTE_NAMES.pay, ROUTE_NAMES.sw, ROUTE_NAMES.pay, ROUTE_NAMES.st];
  for (let i = 0; i < w.shape.keys; i++) {
    const route = routeOrder[i % routeOrder.length] ?? ROUTE_NAMES.pay;
    const order = `k${i}`;
    // The key each route derives: the webhook-id on Standard Webhooks, the order (or Stripe's
    // body id, the same here) on the others.
    const key = route === ROUTE_NAMES.sw ? `msg_${order}` : order;
    // Most downstreams keep idempotency keys past the TTL (36 to 45 days), as long as most
    // deliveries can run, but short of the contract's horizon for a record redriven again and
    // again (docs/your-code.md, rule 4: 50 days, and 15 more per redrive); one key in five
    // meets one without idempotency, where only a compensating reverse takes a second charge back.
    const idempotent = keyRandom() >= 0.2;
    w.downstreamRetentionOf.set(deliveryId(route, key).replace(/\s+/g, ''), idempotent ? (36 + Math.floor(keyRandom() * 10)) * DAY : 0);
    // A post before the effect, or one that fails after it, needs the downstream's idempotency
    // (the contract): without it the next run would charge again. Such keys post after.
    const modeRoll = idempotent ? keyRandom() : 0;
    const body =
      route === ROUTE_NAMES.pay
        ? bodyOf(order, sizeClassOf(keyRandom()), PAY_BODY_LIMIT, w.shape.ordered ? { customer: customerOf(order) } : {})
        : route === ROUTE_NAMES.alt
          ? bodyOf(order, smallSizeClassOf(keyRandom()), SMALL_BODY_LIMIT)
          : bodyOf(order, 'small', PAY_BODY_LIMIT, route === ROUTE_NAMES.st ? destinationOf(i) : {});
    w.pending.push({
      route,
      key,
      order,
      body,
      chargeIds: new Set(),
      idempotentDownstream: idempotent,
      protocolKeys: new Set(),
      hopeless: i % 5 === 4,
      // On an ordered pay route, two keys of every six retry first: k2 twice, k8 once, ...
      stutters: w.shape.ordered && route === ROUTE_NAMES.pay && i % 6 === 2 ? (i % 12 === 2 ? 2 : 1) : 0,
      fixable: i % 10 === 4,
      ledgerMode: modeRoll < 0.4 ? 'after' : modeRoll < 0.65 ? 'after-post-fails' : 'before',
      runsInBudget: 0,
      runs: [],
      everFailed: false,
      redrivesSeen: 0,
      effects: 0,
      excused: 0,
      failed: false,
      sends: 0,
      deferrals: 0,
      ingestSends: new Map(),
      duplicateWindows: new Set(),
      delivered: 0,
      answered: false,
      inFlight: 0,
      concurrent: false,
      home: i % w.regionCount,
      completions: new Map(),
    });
  }
}
