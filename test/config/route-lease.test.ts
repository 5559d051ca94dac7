/**
 * Leases per destination: the lease one record gets from its own body (route-lease.ts), and
 * what resolveConfig builds on the longest (the TTL cover, the executor's timeout).
 */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { ResolvedRoute } from '../../lambdas/config/resolve-config.ts';
import { COMPLETION_MARGIN_SECONDS, DLQ_RETENTION_SECONDS, SENDER_RETRY_WINDOW_SECONDS, leaseMarginSeconds } from '../../lambdas/config/route-config.ts';
import type { RouteConfig } from '../../lambdas/config/route-config.ts';
import { longestActionTime, recordLease } from '../../lambdas/config/route-lease.ts';
import { refusal } from '../support/config-refusal.ts';

const PAYOUTS: RouteConfig = {
  name: 'payouts',
  signature: { scheme: 'stripe' },
  secretName: 'retryproof/payouts',
  actionTime: { field: 'destination', seconds: { EU: 10, APAC: 30, LATAM: 45 }, otherwise: 15 },
  action: 'payout',
};

function resolvedRoute(route: RouteConfig): ResolvedRoute {
  const [resolved] = resolveConfig({ routes: [route] }).routes;
  if (resolved === undefined) throw new Error('no route resolved');
  return resolved;
}


const body = (document: unknown): string => JSON.stringify(document);

describe('recordLease', () => {
  const payouts = resolvedRoute(PAYOUTS);

  it('leases an EU payout for 30 s and a LATAM payout for 135 s, each with its deadline a margin before its lease', () => {
    expect(recordLease(payouts, body({ id: 'evt_1', destination: 'EU' }))).toEqual({ actionTimeSeconds: 10, leaseSeconds: 30, actionDeadlineSeconds: 27 });
    expect(recordLease(payouts, body({ id: 'evt_2', destination: 'LATAM' }))).toEqual({
      actionTimeSeconds: 45,
      leaseSeconds: 135,
      actionDeadlineSeconds: 135 - leaseMarginSeconds(135),
    });
    expect(recordLease(payouts, body({ destination: 'APAC' })).leaseSeconds).toBe(90);
  });

  it('gives otherwise to a destination the table does not name, compared exactly', () => {
    expect(recordLease(payouts, body({ destination: 'NA' })).leaseSeconds).toBe(45);
    expect(recordLease(payouts, body({ destination: 'eu' })).leaseSeconds).toBe(45);
    expect(recordLease(payouts, body({ destination: ' EU' })).leaseSeconds).toBe(45);
  });

  it('gives otherwise to a value that is no destination: an object key of every object, an object, a boolean, null', () => {
    for (const destination of ['constructor', 'toString', '__proto__', { EU: 1 }, ['EU'], true, null]) {
      expect(recordLease(payouts, body({ destination })).leaseSeconds, JSON.stringify(destination)).toBe(45);
    }
  });

  it('gives otherwise to a body without the field, and to a body that is not JSON or not an object', () => {
    expect(recordLease(payouts, body({ id: 'evt_3' })).leaseSeconds).toBe(45);
    expect(recordLease(payouts, 'destination=EU').leaseSeconds).toBe(45);
    expect(recordLease(payouts, '').leaseSeconds).toBe(45);
    expect(recordLease(payouts, body('EU')).leaseSeconds).toBe(45);
    expect(recordLease(payouts, body(['EU'])).leaseSeconds).toBe(45);
  });

  it('reads a base64 body as its bytes, as the key template does, and gives binary bytes otherwise', () => {
    const encoded = Buffer.from(body({ destination: 'LATAM' })).toString('base64');
    expect(recordLease(payouts, encoded, 'base64').leaseSeconds).toBe(135);
    // The same text taken as utf8 is no JSON at all.
    expect(recordLease(payouts, encoded, 'utf8').leaseSeconds).toBe(45);
    expect(recordLease(payouts, Buffer.from([0xff, 0xfe, 0x00, 0x7b]).toString('base64'), 'base64').leaseSeconds).toBe(45);
  });

  it('compares a numeric field value as its text', () => {
    const byZone = resolvedRoute({ ...PAYOUTS, actionTime: { field: 'zone', seconds: { '1': 10, '2.5': 40 }, otherwise: 15 } });
    expect(recordLease(byZone, body({ zone: 1 })).leaseSeconds).toBe(30);
    expect(recordLease(byZone, body({ zone: '1' })).leaseSeconds).toBe(30);
    expect(recordLease(byZone, body({ zone: 2.5 })).leaseSeconds).toBe(120);
    expect(recordLease(byZone, body({ zone: 3 })).leaseSeconds).toBe(45);
  });

  it('follows a JSON pointer field into the body, and takes a plain name with a slash as one field', () => {
    const nested = resolvedRoute({ ...PAYOUTS, actionTime: { field: '/payout/region', seconds: { EU: 10, LATAM: 45 }, otherwise: 15 } });
    expect(recordLease(nested, body({ payout: { region: 'LATAM' } })).leaseSeconds).toBe(135);
    expect(recordLease(nested, body({ payout: { region: 'EU' } })).leaseSeconds).toBe(30);
    expect(recordLease(nested, body({ payout: 'LATAM' })).leaseSeconds).toBe(45);
    expect(recordLease(nested, body({ region: 'LATAM' })).leaseSeconds).toBe(45);
    const slashed = resolvedRoute({ ...PAYOUTS, actionTime: { field: 'a/b', seconds: { EU: 10 }, otherwise: 15 } });
    expect(recordLease(slashed, body({ 'a/b': 'EU' })).leaseSeconds).toBe(30);
    expect(recordLease(slashed, body({ a: { b: 'EU' } })).leaseSeconds).toBe(45);
  });

  it("gives a route with one action time that time's lease, whatever the body", () => {
    const one = resolvedRoute({ name: 'one', signature: { scheme: 'stripe' }, secretName: 's/one', actionTimeSeconds: 15, action: 'payout' });
    expect(recordLease(one, body({ destination: 'EU' }))).toEqual({ actionTimeSeconds: 15, leaseSeconds: 45, actionDeadlineSeconds: one.actionDeadlineSeconds });
    expect(recordLease(one, 'not json').leaseSeconds).toBe(one.leaseSeconds);
  });

  it('never gives a record more than the route\'s longest lease', () => {
    for (const destination of ['EU', 'APAC', 'LATAM', 'NA', undefined]) {
      expect(recordLease(payouts, body({ destination })).leaseSeconds).toBeLessThanOrEqual(payouts.leaseSeconds);
    }
  });
});

describe('longestActionTime', () => {
  it('names the destination with the longest time, or otherwise when none is as long', () => {
    expect(longestActionTime({ seconds: { EU: 10, APAC: 30, LATAM: 45 }, otherwise: 15 })).toEqual({ destination: 'LATAM', seconds: 45 });
    expect(longestActionTime({ seconds: { EU: 10 }, otherwise: 15 })).toEqual({ destination: undefined, seconds: 15 });
    expect(longestActionTime({ seconds: { EU: 15 }, otherwise: 15 })).toEqual({ destination: 'EU', seconds: 15 });
  });
});

describe('a route with a time per destination, in resolveConfig', () => {
  // Stripe retries for 3 days; + 14 days of DLQ retention + the 24 h reconciliation window.
  const withoutLease = SENDER_RETRY_WINDOW_SECONDS.stripe + DLQ_RETENTION_SECONDS + 86_400;

  it('refuses a TTL that covers everything but the longest lease, naming that lease and its destination', () => {
    const message = refusal({ routes: [{ ...PAYOUTS, ttlSeconds: withoutLease + 134 }] });
    expect(message).toBe(
      `route "payouts": ttl ${withoutLease + 134} s is shorter than its cover ${withoutLease + 135} s ` +
        '(sender retry window 259200 s + DLQ retention 1209600 s + reconciliation window 86400 s + ' +
        'the longest lease 135 s (actionTime LATAM 45 s x 3))',
    );
  });

  it('accepts a TTL that covers the longest lease exactly', () => {
    expect(resolvedRoute({ ...PAYOUTS, ttlSeconds: withoutLease + 135 })).toMatchObject({ ttlSeconds: withoutLease + 135, coverSeconds: withoutLease + 135 });
  });

  it('names otherwise when it is the longest time', () => {
    const message = refusal({ routes: [{ ...PAYOUTS, ttlSeconds: withoutLease, actionTime: { field: 'destination', seconds: { EU: 10 }, otherwise: 20 } }] });
    expect(message).toContain('+ the longest lease 60 s (actionTime otherwise 20 s x 3))');
  });

  it("sizes the executor's timeout by the longest lease of every route plus the completion margin", () => {
    const other: RouteConfig = { name: 'other', signature: { scheme: 'stripe' }, secretName: 's/other', actionTimeSeconds: 40, action: 'payout' };
    const resolved = resolveConfig({ routes: [other, PAYOUTS] });
    expect(resolved.executorTimeoutSeconds).toBe(135 + COMPLETION_MARGIN_SECONDS);
    expect(resolveConfig({ routes: [{ ...other, actionTimeSeconds: 50 }, PAYOUTS] }).executorTimeoutSeconds).toBe(150 + COMPLETION_MARGIN_SECONDS);
  });
});
