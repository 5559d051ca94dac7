import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { demoConfig as config } from './fixtures/demo-config.ts';
import { dashboardWidgets, logicalIdOf, synthesize } from './stack-fixture.ts';
import type { SynthesizedApp } from './stack-fixture.ts';

type Resource = { Properties: Record<string, unknown> };

/**
 * The observability follows the configuration: an e-mail address, other storm settings,
 * a route whose breaker only alerts, a slower action (a longer lease), a route name with
 * a dash in it, and a reconciler that runs every 3 hours.
 */
const variant: RetryproofConfig = {
  ...config,
  alarmEmail: 'ops@example.com',
  reconciliation: { ...config.reconciliation, everyMinutes: 180 },
  alarms: { duplicateStormShare: 0.25, duplicateStormMinDeliveries: 50 },
  routes: [
    ...config.routes.map((r) => (r.name === 'stripe' ? { ...r, breakerReaction: 'alert' as const, actionTimeSeconds: 40 } : r)),
    { name: 'shop-orders', signature: { scheme: 'shopify' }, secretName: 'retryproof/shop-orders', action: 'payout', actionTimeSeconds: 5 },
  ],
};

describe('Observability, built from a configuration with its own alarm settings', () => {
  const resolved = resolveConfig(variant);
  let built: SynthesizedApp;
  const alarmNames = () =>
    (Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[]).map((a) => a.Properties.AlarmName as string);
  const alarmNamed = (name: string) =>
    (Object.values(built.template.findResources('AWS::CloudWatch::Alarm')) as Resource[]).find(
      (a) => a.Properties.AlarmName === `Retryproof-${name}`,
    )!.Properties;

  beforeAll(() => {
    // Prepare: one synth for the whole file; cdk-nag runs in it.
    built = synthesize(variant);
  });

  it('subscribes alarmEmail to the alarm topic, once', () => {
    built.template.resourceCountIs('AWS::SNS::Subscription', 1);
    built.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: logicalIdOf(built, 'Alarms/Topic') },
    });
  });

  it('has a duplicate-storm alarm per route at the configured share and minimum of deliveries', () => {
    resolved.routes.forEach((route, i) => {
      const alarm = alarmNamed(`duplicate-storm-${route.name}`);
      expect(alarm.Threshold).toBe(0.25);
      expect(alarm.Metrics).toContainEqual(
        expect.objectContaining({ Expression: `IF(deliveries${i} >= 50, duplicates${i} / deliveries${i}, 0)`, ReturnData: true }),
      );
      expect(alarm.AlarmDescription).toContain('Over 25%');
      expect(alarm.AlarmDescription).toContain('from 50 deliveries');
    });
  });

  it('has a route-paused alarm for routes whose breaker pauses, and a breaker-alert alarm for the one that only alerts', () => {
    expect(alarmNames().filter((n) => n.includes('route-paused')).sort()).toEqual([
      'Retryproof-route-paused-demo',
      'Retryproof-route-paused-shop-orders',
    ]);
    expect(alarmNames().filter((n) => n.includes('breaker-alert'))).toEqual(['Retryproof-breaker-alert-stripe']);
    // The ingest sends no notice of its own: this alarm is the alert, on BreakerTripped, an event.
    expect(alarmNamed('breaker-alert-stripe')).toMatchObject({ MetricName: 'BreakerTripped', Period: 60, Threshold: 0 });
    expect(alarmNamed('breaker-alert-stripe').OKActions).toBeUndefined();
  });

  it('alarms on a message older than the longest retry budget of any route: its attempts, each a lease plus the visibility timeout', () => {
    const stripe = resolved.routes.find((r) => r.name === 'stripe')!;
    expect([stripe.maxAttempts, stripe.leaseSeconds, resolved.queue.visibilityTimeoutSeconds]).toEqual([5, 120, 780]);
    const alarm = alarmNamed('queue-oldest-over-retries');
    expect(alarm.Threshold).toBe(4500);
    expect(alarm.AlarmDescription).toContain('(4500 s: route "stripe"\'s 5 attempts, each a 120 s lease plus the 780 s visibility timeout)');
  });

  it('waits two schedule intervals, 6 hours, before calling a reconciler that runs every 3 hours silent', () => {
    expect(alarmNamed('reconciler-no-run')).toMatchObject({ Period: 3600, EvaluationPeriods: 6, Threshold: 1, TreatMissingData: 'missing' });
    expect(alarmNamed('reconciler-no-run').AlarmDescription).toContain('for 6 hours');
  });

  it('does not warn about alarms nobody hears, since alarmEmail is set: its one warning is the demo\'s', () => {
    Annotations.fromStack(built.stack).hasNoWarning('*', Match.stringLikeRegexp('alarmEmail'));
    const warnings = Annotations.fromStack(built.stack).findWarning('*', Match.anyValue());
    expect(warnings.map((w) => w.entry.data)).toEqual([expect.stringMatching(/^demo: true deploys the demo payout action/)]);
  });

  it('draws the storm share and the oldest-message threshold on the dashboard, and graphs every route', () => {
    const widgets = dashboardWidgets(built, 'Observability/Dashboard');
    const titled = (title: string) => widgets.find((w) => w.properties.title === title)!;
    expect(titled('Duplicate rate per route').properties.annotations?.horizontal?.[0]?.value).toBe(0.25);
    expect(titled('Oldest message age (seconds)').properties.annotations?.horizontal?.[0]?.value).toBe(4500);
    for (const route of ['demo', 'stripe', 'shop-orders']) {
      expect(titled(`Retry causes: ${route}`)).toBeDefined();
      expect(titled(`Answers by status: ${route}`)).toBeDefined();
    }
  });
});
