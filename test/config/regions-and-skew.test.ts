import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RouteConfig } from '../../lambdas/config/route-config.ts';
import { refusal } from '../support/config-refusal.ts';

const route: RouteConfig = {
  name: 'stripe',
  signature: { scheme: 'stripe' },
  secretName: 'retryproof/stripe',
  actionTimeSeconds: 10,
  action: 'payout',
};


describe('regions', () => {
  it('accepts two replicas and a witness of one Region set', () => {
    const resolved = resolveConfig({ routes: [route], regions: { replicas: ['eu-west-1', 'eu-central-1'], witness: 'eu-west-2' } });
    expect(resolved.regions).toEqual({ replicas: ['eu-west-1', 'eu-central-1'], witness: 'eu-west-2' });
  });

  it('accepts three replicas and no witness', () => {
    expect(resolveConfig({ routes: [route], regions: { replicas: ['us-east-1', 'us-east-2', 'us-west-2'] } }).regions?.witness).toBeUndefined();
  });

  it('is absent for one Region', () => {
    expect(resolveConfig({ routes: [route] }).regions).toBeUndefined();
  });

  it('refuses eventual consistency with the reason', () => {
    const message = refusal({ routes: [route], regions: { replicas: ['us-east-1', 'us-east-2', 'us-west-2'], consistency: 'eventual' } });
    expect(message).toContain('consistency "eventual" is refused');
    expect(message).toContain('last writer wins');
    expect(message).toContain('two Regions can both claim one key');
  });

  it('refuses two replicas without a witness, and three with one', () => {
    expect(refusal({ routes: [route], regions: { replicas: ['us-east-1', 'us-east-2'] } })).toContain('need a witness Region');
    expect(refusal({ routes: [route], regions: { replicas: ['us-east-1', 'us-east-2', 'us-west-2'], witness: 'us-west-2' } })).toContain(
      'also a replica',
    );
  });

  it('refuses Regions of two Region sets, and Regions MRSC does not reach', () => {
    expect(refusal({ routes: [route], regions: { replicas: ['us-east-1', 'eu-west-1'], witness: 'us-west-2' } })).toContain('several Region sets');
    expect(refusal({ routes: [route], regions: { replicas: ['sa-east-1', 'us-east-1'], witness: 'us-west-2' } })).toContain(
      'sa-east-1 is in no MRSC Region set',
    );
  });

  it('refuses a Region prefix in a key template, naming the reason', () => {
    const message = refusal({
      routes: [{ ...route, key: 'us-east1_{body:/order_id}' }],
      regions: { replicas: ['us-east-1', 'us-east-2'], witness: 'us-west-2' },
    });
    expect(message).toContain('makes one event two keys');
    expect(message).toContain('{body:/datacenter}');
  });

  it('keeps keys the sender mints per datacenter, and a Region prefix in one Region', () => {
    const regions = { replicas: ['us-east-1', 'us-east-2'], witness: 'us-west-2' };
    expect(() => resolveConfig({ routes: [{ ...route, key: '{body:/datacenter}_{body:/order_id}' }], regions })).not.toThrow();
    expect(() => resolveConfig({ routes: [{ ...route, key: 'us-east1_{body:/order_id}' }] })).not.toThrow();
  });
});

describe('maxClockSkewSeconds', () => {
  it('defaults to 5 s and takes 1 to 60', () => {
    expect(resolveConfig({ routes: [route] }).clockSkewSeconds).toBe(5);
    expect(resolveConfig({ routes: [route], maxClockSkewSeconds: 1 }).clockSkewSeconds).toBe(1);
    expect(refusal({ routes: [route], maxClockSkewSeconds: 0 })).toBe('config: maxClockSkewSeconds must be an integer from 1 to 60, got 0');
  });

  it('refuses a settle margin that leaves no room for it', () => {
    const message = refusal({ routes: [route], maxClockSkewSeconds: 30, reconciliation: { settleSeconds: 45 } });
    expect(message).toContain('settleSeconds 45 s leaves no room for the clock bound');
    expect(message).toContain('(60 s)');
  });
});

describe('actionTime per destination', () => {
  const perDestination: RouteConfig = {
    name: 'payouts',
    signature: { scheme: 'stripe' },
    secretName: 'retryproof/payouts',
    actionTime: { field: 'destination', seconds: { EU: 10, APAC: 30, LATAM: 45 }, otherwise: 15 },
    action: 'payout',
  };

  it('takes the longest for the lease the function timeout is sized by', () => {
    const resolved = resolveConfig({ routes: [perDestination] });
    const [r] = resolved.routes;
    expect(r?.actionTimeSeconds).toBe(45);
    expect(r?.leaseSeconds).toBe(135);
    expect(r?.actionTime).toEqual({ pointer: '/destination', seconds: { EU: 10, APAC: 30, LATAM: 45 }, otherwise: 15 });
    expect(resolved.executorTimeoutSeconds).toBe(145);
  });

  it('refuses both forms at once, and neither', () => {
    expect(refusal({ routes: [{ ...perDestination, actionTimeSeconds: 10 }] })).toContain('gives both actionTimeSeconds and actionTime');
    const { actionTime: _table, ...bare } = perDestination;
    expect(refusal({ routes: [bare] })).toContain('needs actionTimeSeconds');
  });

  it('refuses a time past what the lease and the completion margin fit in', () => {
    expect(refusal({ routes: [{ ...perDestination, actionTime: { field: 'destination', seconds: { EU: 400 }, otherwise: 15 } }] })).toContain(
      'route "payouts": actionTime.seconds.EU must be an integer from 1 to 296',
    );
  });
});
