import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import { WebhookReceiver } from '../../lib/webhook-receiver.ts';
import { logRetention } from '../../lib/log-retention.ts';
import { WorkQueue } from '../../lib/stateful/work-queue.ts';
import { shippedConfigJson } from '../../lib/stateless/shipped-config.ts';
import { parseShippedConfig } from '../../lambdas/config/shipped-config.ts';
import { demoConfig as config } from './fixtures/demo-config.ts';
import { NO_BUNDLING, thrownBy, withOwnAction } from './stack-fixture.ts';
import { readLocalSettings, SettingsError } from '../../local/local-settings.ts';


const withStripe = (patch: Partial<RetryproofConfig['routes'][number]>): RetryproofConfig => ({
  ...config,
  routes: config.routes.map((r) => (r.name === 'stripe' ? { ...r, ...patch } : r)),
});

describe('a route whose TTL is shorter than its cover', () => {
  const shortTtl = withStripe({ ttlSeconds: 3600 });
  const expected =
    'route "stripe": ttl 3600 s is shorter than its cover 1555245 s ' +
    '(sender retry window 259200 s + DLQ retention 1209600 s + reconciliation window 86400 s + lease 45 s (actionTimeSeconds 15 s x 3))';

  it('is refused by resolveConfig with a ConfigError that names the numbers', () => {
    const err = thrownBy(() => resolveConfig(shortTtl));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(expected);
  });

  it('fails the app before any stack is built', () => {
    const err = thrownBy(() => createRetryproofApp(shortTtl, { context: NO_BUNDLING }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(expected);
  });

  it('is refused by the WebhookReceiver construct itself, outside the app', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Embedding');
    const { demo: _demo, ...receiverConfig } = withOwnAction(shortTtl);
    const err = thrownBy(() => new WebhookReceiver(stack, 'Receiver', { ...receiverConfig, actions: receiverConfig.actions ?? {} }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(expected);
  });

  it('passes once the TTL covers the window and the lease exactly', () => {
    expect(resolveConfig(withStripe({ ttlSeconds: 1_555_245 })).routes[1]!.ttlSeconds).toBe(1_555_245);
  });
});

describe('a visibility timeout under 6x the executor timeout', () => {
  // Two 15 s actions: lease 45 s + 10 s margin = a 55 s executor, so at least 330 s.
  const tooShort: RetryproofConfig = { ...config, queue: { ...config.queue, visibilityTimeoutSeconds: 329 } };

  it('is refused by resolveConfig with a ConfigError that names the numbers', () => {
    const err = thrownBy(() => resolveConfig(tooShort));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("queue: visibilityTimeoutSeconds 329 s is under 6x the executor's timeout of 55 s (minimum 330 s)");
  });

  it('fails the app before any stack is built', () => {
    expect(() => createRetryproofApp(tooShort, { context: NO_BUNDLING })).toThrow(ConfigError);
  });

  it('is refused by the WorkQueue construct when passed to it directly', () => {
    const stack = new Stack(new App(), 'Queues');
    const err = thrownBy(
      () =>
        new WorkQueue(stack, 'Work', {
          namePrefix: 'Queues',
          maxReceiveCount: 5,
          visibilityTimeout: Duration.seconds(329),
          consumerTimeout: Duration.seconds(55),
        }),
    );
    expect(err.message).toBe("visibility timeout 329 s is under 6x the consumer's timeout of 55 s (minimum 330 s)");
  });

  it('is accepted by the WorkQueue construct at exactly 6x', () => {
    const stack = new Stack(new App(), 'Queues');
    new WorkQueue(stack, 'Work', {
      namePrefix: 'Queues',
      maxReceiveCount: 5,
      visibilityTimeout: Duration.seconds(330),
      consumerTimeout: Duration.seconds(55),
    });
    Template.fromStack(stack).hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 330 });
  });
});

describe('other synth-time guards', () => {
  it('ships a configuration over the 4 KB Lambda allows for a function\'s whole environment, since it goes into the code', () => {
    const big: RetryproofConfig = withStripe({ keepHeaders: Array.from({ length: 300 }, (_, i) => `x-header-${i}`) });
    const { receiver } = createRetryproofApp(big, { context: NO_BUNDLING }).stack;
    const shipped = receiver.ingestFunction.shippedConfig ?? '';
    expect(Buffer.byteLength(shipped)).toBeGreaterThan(4096);
    expect(parseShippedConfig(shipped).resolved.routes.find((r) => r.name === 'stripe')?.keepHeaders).toHaveLength(300);
  });

  it('ships the config as resolveConfig resolves it, beside the routes\' queue names', () => {
    expect(parseShippedConfig(shippedConfigJson(config, new Map([['stripe', 'q']])))).toEqual({
      resolved: JSON.parse(JSON.stringify(resolveConfig(config))) as unknown,
      routeQueueNames: { stripe: 'q' },
    });
  });

  it('refuses a log retention CloudWatch Logs does not offer', () => {
    expect(() => logRetention(31)).toThrow(/^log retention of 31 days is not one cloudwatch logs accepts \(1, 3, 5, 7, 14, 30,/);
    expect(logRetention(30)).toBe(30);
    expect(() => createRetryproofApp({ ...config, logRetentionDays: 31 }, { context: NO_BUNDLING })).toThrow('log retention of 31 days');
  });
});

describe('a route whose action nobody supplied', () => {
  const withLog = withStripe({ action: 'log' });
  const expected =
    "route \"stripe\": action \"log\" is not supplied; the actions supplied are: payout (add it to actions: { log: { entry: 'src/actions/log.ts' } })";

  it('fails the app at synth, naming the route and the action', () => {
    const err = thrownBy(() => createRetryproofApp(withLog));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(expected);
  });

  it('fails npm start the same way, before anything starts', () => {
    const err = thrownBy(() => readLocalSettings({}, withLog, '/tmp'));
    expect(err).toBeInstanceOf(SettingsError);
    expect(err.message).toBe(`retryproof.config.ts: ${expected}`);
  });
});

describe('the configuration the functions get', () => {
  it('is resolved at synth, the same for each function of the app: the demo switch and the action paths are not shipped, and nothing needs them', () => {
    const { receiver } = createRetryproofApp(config, { context: NO_BUNDLING }).stack;
    const shipped = [receiver.ingestFunction, receiver.executorFunction, receiver.reconcilerFunction].map((f) => f.shippedConfig);
    expect(new Set(shipped).size).toBe(1);
    for (const raw of shipped) {
      const parsed = parseShippedConfig(raw).resolved;
      expect(parsed.demo).toBe(false);
      expect(parsed).not.toHaveProperty('actions');
      expect(parsed.routes.map((r) => r.action)).toEqual(['payout', 'payout']);
    }
  });

  it('refuses, in the app, a route on the demo payout without the demo', () => {
    const err = thrownBy(() => createRetryproofApp({ ...config, demo: false }, { context: NO_BUNDLING }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe('route "demo": action "payout" is the demo\'s, deployed only with demo: true; set demo: true, or give the route an action of yours');
  });
});

