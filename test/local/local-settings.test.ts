import { describe, expect, it } from 'vitest';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { DEMO_ACTION_SOURCE } from '../../lambdas/demo/demo-environment.ts';
import { config } from '../../retryproof.config.ts';
import { bodyBucketName } from '../../lib/stateful/body-bucket.ts';
import {
  DEFAULT_LOCAL_VISIBILITY_SECONDS,
  IN_RETRYPROOF_REPOSITORY,
  LOCAL_DEMO_SECRET,
  LOCAL_SCHEME_DEMO_ROUTES,
  LOCAL_V1A_SIGNING_KEY,
  readLocalSettings,
  SettingsError,
} from '../../local/local-settings.ts';

/** A team's own configuration: one route on its own action, no demo. */
const ORDERS: RetryproofConfig = {
  routes: [{ name: 'orders', signature: { scheme: 'standard-webhooks' }, secretName: 'orders/webhook', action: 'placeOrder', actionTimeSeconds: 5 }],
  actions: { placeOrder: { entry: 'src/place-order.ts', ledger: '/srv/orders/ledger.ts' } },
  demo: false,
};

describe('readLocalSettings', () => {
  it('runs the CDK app\'s routes with local defaults', () => {
    const s = readLocalSettings({}, config, '/work');
    expect(s.port).toBe(3000);
    expect(s.dir).toBe('/work/.local');
    // The app's routes, then one demo route per signature scheme (local only).
    expect(s.config.routes.map((r) => r.name)).toEqual([...config.routes, ...LOCAL_SCHEME_DEMO_ROUTES].map((r) => r.name));
    expect(s.secrets.find((x) => x.route === 'demo-v1a')?.secret).toMatch(/^whpk_/);
    expect(s.secrets.find((x) => x.route === 'demo-v1a')?.signingSecret).toBe(LOCAL_V1A_SIGNING_KEY);
    expect(s.secrets.find((x) => x.route === 'demo-github')).toMatchObject({ secret: 'local-demo-github-secret', signingSecret: 'local-demo-github-secret' });
    expect(s.config.queue.visibilityTimeoutSeconds).toBe(DEFAULT_LOCAL_VISIBILITY_SECONDS);
    expect(s.reconcileEverySeconds).toBe((config.reconciliation?.everyMinutes ?? 60) * 60);
    expect(s.secrets.find((x) => x.route === 'demo')?.secret).toBe(LOCAL_DEMO_SECRET);
    expect(s.secrets.find((x) => x.route === 'stripe')?.secret).toMatch(/^whsec_local_/);
    expect(s.demoSecretFromEnv).toBe(false);
  });

  it('gives the executor the demo\'s payout while the demo is on, and names the default configuration file', () => {
    const s = readLocalSettings({}, config, '/work');
    expect(s.actions).toEqual({ payout: DEMO_ACTION_SOURCE, handleStripeEvent: { entry: '/work/actions/handle-stripe-event.ts' } });
    expect(s.configFile).toBe('/work/retryproof.config.ts');
  });

  it('runs a configuration without the demo on its own routes and actions, relative paths taken from the working directory', () => {
    // Act
    const s = readLocalSettings({}, ORDERS, '/work/shop', 'config/receiver.ts');
    // Assess: no demo route of any scheme (they run the demo's payout), no payout.
    expect(s.config.routes.map((r) => r.name)).toEqual(['orders']);
    expect(s.actions).toEqual({ placeOrder: { entry: '/work/shop/src/place-order.ts', ledger: '/srv/orders/ledger.ts' } });
    expect(s.configFile).toBe('/work/shop/config/receiver.ts');
    expect(s.config.demo).toBe(false);
  });

  it("serves an app's own routes only when it runs from the installed package and its configuration says nothing of the demo", () => {
    // Prepare: the docs' consumer configuration, which leaves `demo` unset.
    const { demo: _unset, ...consumer } = ORDERS;
    // Act
    const installed = readLocalSettings({}, consumer, '/work/shop', 'retryproof.config.ts', { inRepository: false });
    const here = readLocalSettings({}, consumer, '/work/shop', 'retryproof.config.ts', { inRepository: true });
    const asked = readLocalSettings({}, { ...consumer, demo: true }, '/work/shop', 'retryproof.config.ts', { inRepository: false });
    // Assess
    expect(installed.config.routes.map((r) => r.name)).toEqual(['orders']);
    expect(installed.actions.payout).toBeUndefined();
    expect(here.config.routes.map((r) => r.name)).toEqual(['orders', ...LOCAL_SCHEME_DEMO_ROUTES.map((r) => r.name)]);
    expect(asked.config.routes.map((r) => r.name)).toContain('demo');
    expect(IN_RETRYPROOF_REPOSITORY).toBe(true);
  });

  it('refuses a route whose action nobody supplied, naming the configuration file, the route and the action', () => {
    // Prepare
    const orphan: RetryproofConfig = { ...ORDERS, routes: [...ORDERS.routes, { ...ORDERS.routes[0]!, name: 'refunds', action: 'refund' }] };
    // Act
    const act = () => readLocalSettings({}, orphan, '/work', 'shop.config.ts');
    // Assess
    expect(act).toThrow(SettingsError);
    expect(act).toThrow(
      'shop.config.ts: route "refunds": action "refund" is not supplied; the actions supplied are: placeOrder ' +
        "(add it to actions: { refund: { entry: 'src/actions/refund.ts' } })",
    );
  });

  it('puts every problem of an invalid configuration on its one line', () => {
    // Prepare: two mistakes the schema finds on its own.
    const invalid = { ...ORDERS, routes: [{ ...ORDERS.routes[0]!, actionTimeSeconds: 0, secretName: '' }] };
    // Act
    const act = () => readLocalSettings({}, invalid, '/work');
    // Assess
    expect(act).toThrow(SettingsError);
    expect(act).toThrow(/^retryproof\.config\.ts: \S.*; \S/);
    expect(act).not.toThrow(/\n/);
  });

  it('takes every override, fast local timings included, below what a deployment allows', () => {
    const s = readLocalSettings(
      {
        PORT: '3456',
        RETRYPROOF_LOCAL_DIR: 'data/one',
        RETRYPROOF_VISIBILITY_TIMEOUT_S: '1',
        RETRYPROOF_MAX_ATTEMPTS: '2',
        RETRYPROOF_MAX_RECEIVE_COUNT: '6',
        RETRYPROOF_RECONCILE_EVERY_S: '0',
        RETRYPROOF_STUCK_AFTER_S: '0',
        RETRYPROOF_SETTLE_S: '0',
        RETRYPROOF_ACTION_TIME_S: '1',
        RETRYPROOF_DEMO_SECRET: `whsec_${Buffer.from('another-demo-secret').toString('base64')}`,
      },
      config,
      '/work',
    );
    expect(s).toMatchObject({ port: 3456, dir: '/work/data/one', reconcileEverySeconds: 0, demoSecretFromEnv: true });
    expect(s.config.queue).toMatchObject({ visibilityTimeoutSeconds: 1, maxReceiveCount: 6, resendAfterSeconds: 61 });
    expect(new Set(s.config.routes.map((r) => r.maxAttempts))).toEqual(new Set([2]));
    expect(s.config.reconciliation).toMatchObject({ stuckAfterSeconds: 0, settleSeconds: 0 });
    expect(new Set(s.config.routes.map((r) => r.leaseSeconds))).toEqual(new Set([3]));
  });

  it.each([
    ['PORT', 'abc', 'PORT must be a whole number from 1 to 65535, got "abc"'],
    ['PORT', '70000', 'PORT must be a whole number from 1 to 65535, got "70000"'],
    ['RETRYPROOF_VISIBILITY_TIMEOUT_S', '0', 'RETRYPROOF_VISIBILITY_TIMEOUT_S must be a whole number from 1 to 43200, got "0"'],
    ['RETRYPROOF_MAX_RECEIVE_COUNT', '2.5', 'RETRYPROOF_MAX_RECEIVE_COUNT must be a whole number from 1 to 1000, got "2.5"'],
    ['RETRYPROOF_MAX_RECEIVE_COUNT', '5', 'queue: maxReceiveCount 5 is below the backstop 12 that route "stripe" needs'],
    ['RETRYPROOF_MAX_ATTEMPTS', '0', 'RETRYPROOF_MAX_ATTEMPTS must be a whole number from 1 to 100, got "0"'],
    ['RETRYPROOF_RECONCILE_EVERY_S', '-1', 'RETRYPROOF_RECONCILE_EVERY_S must be a whole number from 0 to 86400, got "-1"'],
    ['RETRYPROOF_DEMO_SECRET', 'whsec_not base64!', 'RETRYPROOF_DEMO_SECRET is not a usable standard-webhooks secret'],
  ])('refuses %s=%s with one line naming it', (name, value, message) => {
    const act = () => readLocalSettings({ [name]: value }, config, '/work');
    expect(act).toThrow(SettingsError);
    expect(act).toThrow(message);
    try {
      act();
    } catch (err) {
      expect((err as Error).message).not.toContain('\n');
    }
  });
});

describe('readLocalSettings: the local Regions', () => {
  it('runs one Region, local-1, on PORT with the single-Region queue and its bucket, without --regions', () => {
    const s = readLocalSettings({}, config, '/work');
    expect(s.regions).toEqual([{ name: 'local-1', port: 3000, queue: 'retryproof-work', bodyBucket: 'retryproof-bodies-000000000000-local-1' }]);
  });

  it('names a count local-1 ... local-N, on consecutive ports, the first keeping the single-Region queue, each a bucket named as the construct names one', () => {
    const s = readLocalSettings({ PORT: '4100' }, config, '/work', undefined, { regions: '3' });
    expect(s.regions).toEqual([
      { name: 'local-1', port: 4100, queue: 'retryproof-work', bodyBucket: 'retryproof-bodies-000000000000-local-1' },
      { name: 'local-2', port: 4101, queue: 'retryproof-work-local-2', bodyBucket: 'retryproof-bodies-000000000000-local-2' },
      { name: 'local-3', port: 4102, queue: 'retryproof-work-local-3', bodyBucket: 'retryproof-bodies-000000000000-local-3' },
    ]);
  });

  it('gives every Region a valid S3 bucket name, the longest Region name included', () => {
    // Prepare: a Region name of the 32 characters local names may have.
    const longest = `r${'x'.repeat(30)}1`;
    // Act
    const s = readLocalSettings({}, config, '/work', undefined, { regions: `us-east-1,${longest}` });
    // Assess: 3 to 63 lowercase letters, digits and hyphens, from a letter or digit to one (S3's naming rules).
    for (const region of s.regions) expect(region.bodyBucket).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/);
    expect(s.regions.map((r) => r.bodyBucket)).toEqual(['retryproof-bodies-000000000000-us-east-1', `retryproof-bodies-000000000000-${longest}`]);
    // The construct's name for a receiver with the prefix `retryproof` in us-east-1, the account the local services name.
    expect(bodyBucketName('retryproof', '000000000000', 'us-east-1')).toBe(s.regions[0]?.bodyBucket);
  });

  it('takes a list of names as given, in its order', () => {
    const s = readLocalSettings({}, config, '/work', undefined, { regions: 'us-east-2, us-east-1' });
    expect(s.regions.map((r) => [r.name, r.port, r.queue])).toEqual([
      ['us-east-2', 3000, 'retryproof-work'],
      ['us-east-1', 3001, 'retryproof-work-us-east-1'],
    ]);
  });

  it('takes the configuration\'s regions.replicas without the flag, and the flag over them', () => {
    // Prepare: two replicas and a witness, as MRSC accepts; the witness holds no replica, so no Region runs it.
    const global: RetryproofConfig = { ...config, regions: { replicas: ['us-east-1', 'us-east-2'], witness: 'us-west-2' } };
    // Act
    const fromFile = readLocalSettings({}, global, '/work');
    const fromFlag = readLocalSettings({}, global, '/work', undefined, { regions: '2' });
    // Assess
    expect(fromFile.regions.map((r) => r.name)).toEqual(['us-east-1', 'us-east-2']);
    expect(fromFlag.regions.map((r) => r.name)).toEqual(['local-1', 'local-2']);
  });

  it.each([
    ['0', '--regions must be a count from 1 to 8 or a list of names such as us-east-1,us-east-2, got "0"'],
    ['9', '--regions must be a count from 1 to 8 or a list of names such as us-east-1,us-east-2, got "9" (at most 8 run locally: each is a gateway, a queue pair and an executor on this machine)'],
    ['-2', '--regions must be a count from 1 to 8 or a list of names such as us-east-1,us-east-2, got "-2"'],
    ['', '--regions must be a count from 1 to 8 or a list of names such as us-east-1,us-east-2, got ""'],
    ['us-east-1,us-east-1', '--regions names the region us-east-1 twice (us-east-1,us-east-1)'],
    ['us-east-1,,us-east-2', '--regions has an empty region name in "us-east-1,,us-east-2"'],
    ['US_EAST', '--regions: "US_EAST" is not a region name: lowercase letters, digits and hyphens, from a letter to a letter or digit, at most 32 characters (such as us-east-1)'],
    ['east-', '--regions: "east-" is not a region name'],
    ['a,b,c,d,e,f,g,h,i', '--regions names 9 regions (a,b,c,d,e,f,g,h,i); at most 8 run locally'],
  ])('refuses --regions %j with one line naming the value', (flag, message) => {
    const act = () => readLocalSettings({}, config, '/work', undefined, { regions: flag });
    expect(act).toThrow(SettingsError);
    expect(act).toThrow(message);
  });

  it('refuses Regions whose ports would run past 65535, saying which PORT fits', () => {
    const act = () => readLocalSettings({ PORT: '65535' }, config, '/work', undefined, { regions: '2' });
    expect(act).toThrow('2 regions need the ports 65535 to 65536, past 65535: start with PORT=65534 or lower');
  });
});
