import { describe, expect, it } from 'vitest';
import { config } from '../../retryproof.config.ts';
import {
  DEFAULT_LOCAL_VISIBILITY_SECONDS,
  LOCAL_DEMO_SECRET,
  LOCAL_SCHEME_DEMO_ROUTES,
  LOCAL_V1A_SIGNING_KEY,
  readLocalSettings,
  SettingsError,
} from '../../local/local-settings.ts';

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
    ['RETRYPROOF_MAX_RECEIVE_COUNT', '5', 'queue: maxReceiveCount 5 is below the backstop 12 that route "demo" needs'],
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
