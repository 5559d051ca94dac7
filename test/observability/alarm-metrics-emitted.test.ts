import { beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { createIngestHandler } from '../../lambdas/ingest/create-ingest-handler.ts';
import { prepareRoutes } from '../../lambdas/ingest/prepared-route.ts';
import { METRICS_NAMESPACE, SERVICE } from '../../lambdas/observability/metric-catalogue.ts';
import { createLogger, createMetrics } from '../../lambdas/observability/powertools.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { StaticSecretSource } from '../../local/static-secret-source.ts';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { httpApiEvent, lambdaContext } from '../../local/http-api-event.ts';
import { config } from '../../retryproof.config.ts';
import { synthesize } from '../cdk/stack-fixture.ts';
import { MAX_RECEIVE_COUNT, ROUTE } from '../support/executor-fixture.ts';
import { previousSecretOf, SCHEME_ROUTES, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { reconcilerFixture } from '../support/reconciler-fixture.ts';
import { captureEmf, reconcilerEnvironmentOf, runReconcilerHandler } from './emf-capture.ts';
import type { EmittedMetric } from './emf-capture.ts';
import { ANSWER_MARGIN_MS } from '../../lambdas/ingest/ingest-delivery.ts';
import { testConfig } from '../support/test-config.ts';

/** A metric an alarm reads: CloudWatch's identity of it, the namespace, the name and the exact dimension set. */
interface AlarmMetric {
  readonly alarm: string;
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Readonly<Record<string, string>>;
}

interface CfnMetric {
  readonly Namespace: string;
  readonly MetricName: string;
  readonly Dimensions?: readonly { Name: string; Value: unknown }[];
}

/** Every metric every alarm of the template reads: its own, or each input of its math expression. */
function alarmMetrics(alarms: Record<string, { Properties: Record<string, unknown> }>): AlarmMetric[] {
  return Object.values(alarms).flatMap(({ Properties: p }) => {
    const alarm = p.AlarmName as string;
    const metrics: CfnMetric[] =
      p.MetricName === undefined
        ? (p.Metrics as { MetricStat?: { Metric: CfnMetric } }[]).flatMap((m) => (m.MetricStat === undefined ? [] : [m.MetricStat.Metric]))
        : [{ Namespace: p.Namespace as string, MetricName: p.MetricName as string, Dimensions: p.Dimensions as CfnMetric['Dimensions'] }];
    return metrics.map((m) => ({
      alarm,
      namespace: m.Namespace,
      name: m.MetricName,
      // A Retryproof dimension is a literal; an AWS one may be a reference, which is not compared.
      dimensions: Object.fromEntries((m.Dimensions ?? []).map((d) => [d.Name, typeof d.Value === 'string' ? d.Value : JSON.stringify(d.Value)])),
    }));
  });
}

/**
 * The metric's identity with the route's name taken out: the alarms are built for the
 * deployment's routes, the scenario sends to a test route, and a per-route alarm is right
 * when its metric is emitted under the same dimensions for any route.
 */
function identity(namespace: string, name: string, dimensions: Readonly<Record<string, string>>): string {
  const dims = Object.entries(dimensions)
    .map(([k, v]) => `${k}=${k === 'route' ? '<route>' : v}`)
    .sort();
  return `${namespace} ${name} {${dims.join(', ')}}`;
}

describe('every alarm on a Retryproof metric reads one the functions emit, under the dimensions they emit it with', () => {
  let wanted: AlarmMetric[] = [];
  let emitted: EmittedMetric[] = [];
  const routes = resolveConfig(config).routes.map((r) => r.name);

  beforeAll(async () => {
    // Prepare: the alarms of the stack as retryproof.config.ts deploys it.
    const built = synthesize(config);
    wanted = alarmMetrics(built.template.findResources('AWS::CloudWatch::Alarm') as Record<string, { Properties: Record<string, unknown> }>);

    // Act: the real handlers, on tables and a queue of their own, with the service names the
    // Lambdas use. The ingest is wired as lambdas/ingest/handler.ts wires it, with local secrets
    // (no Secrets Manager here).
    const rf = await reconcilerFixture();
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const fixtureConfig = testConfig(rf.fx.routes, { queue: { maxReceiveCount: MAX_RECEIVE_COUNT }, reconciliation: { settleSeconds: 2 }, maxClockSkewSeconds: 1 });
    const secrets = new StaticSecretSource(
      Object.fromEntries(SCHEME_ROUTES.map((r) => [r.secretName, JSON.stringify({ current: r.secret, previous: previousSecretOf(r.name) })])),
    );
    emitted = await captureEmf(async () => {
      let senderWaitedMs = 0;
      const ingest = createIngestHandler({
        routes: prepareRoutes(resolveConfig(fixtureConfig).routes),
        store: new DynamoDbEventStore(rf.dynamo, rf.eventsTable),
        queue: new SqsWorkQueue(sqs, rf.fx.queueUrl),
        secrets,
        now: () => Date.now() + senderWaitedMs,
        breaker: { routeState: new DynamoDbRouteStateStore(rf.dynamo, rf.eventsTable) },
        logger: createLogger(SERVICE.ingest),
        metrics: createMetrics(SERVICE.ingest),
      });
      // One key delivered five times: a new delivery, duplicates, and past the route's
      // breaker threshold of 3 repeats, a pause.
      const delivery = signedDelivery(ROUTE, uniqueKey(ROUTE));
      for (let i = 0; i < 5; i++) {
        const answer = await ingest(httpApiEvent({ route: ROUTE, body: delivery.body, headers: delivery.headers }), lambdaContext());
        expect(answer.statusCode).toBe(202);
        // The worker takes the first delivery's work: its lease starts the breaker's count.
        if (i === 0) await rf.fx.drain();
        // The sender repeats after more than ANSWER_MARGIN_MS: a repeat the breaker counts.
        senderWaitedMs += ANSWER_MARGIN_MS + 1;
      }
      // One delivery signed with a secret the receiver does not hold: a 401, which the
      // signature-rejection alarm counts.
      const forged = signedDelivery(ROUTE, uniqueKey(ROUTE), { secret: `whsec_${Buffer.from('not-the-receivers-secret-32bytes').toString('base64')}` });
      const refused = await ingest(httpApiEvent({ route: ROUTE, body: forged.body, headers: forged.headers }), lambdaContext());
      expect(refused.statusCode).toBe(401);
      // The reconciler through its own Lambda entry point, as the schedule runs it.
      await runReconcilerHandler(reconcilerEnvironmentOf(rf, fixtureConfig));
    });
  });

  it('reads only Retryproof metrics and AWS service metrics (AWS/Lambda, AWS/SQS, AWS/Scheduler, ...), which are exempt here', () => {
    expect(wanted.length).toBeGreaterThan(0);
    for (const m of wanted) expect(m.namespace === METRICS_NAMESPACE || m.namespace.startsWith('AWS/'), `${m.alarm}: ${m.namespace}`).toBe(true);
  });

  it('names the deployment\'s routes and the functions\' services in its Retryproof dimensions', () => {
    const own = wanted.filter((m) => m.namespace === METRICS_NAMESPACE);
    // The pause, the storm (deliveries and duplicates), the 401 share, the four findings and the heartbeat.
    expect(new Set(own.map((m) => m.name))).toEqual(
      new Set(['RoutePaused', 'Deliveries', 'DuplicatesIntercepted', 'SignatureRejected', 'ReconcilerReversed', 'ReconcilerNeedsAttention', 'ReconcilerMissingEffects', 'ReconcilerOrphans', 'ReconcilerRuns']),
    );
    for (const m of own) {
      expect(Object.values(SERVICE), m.alarm).toContain(m.dimensions.service);
      if ('route' in m.dimensions) expect(routes, m.alarm).toContain(m.dimensions.route);
    }
  });

  it('finds each Retryproof metric an alarm reads in the EMF the handlers wrote', () => {
    const written = new Set(emitted.map((e) => identity(e.namespace, e.name, e.dimensions)));
    const missing = wanted
      .filter((m) => m.namespace === METRICS_NAMESPACE)
      .filter((m) => !written.has(identity(m.namespace, m.name, m.dimensions)))
      .map((m) => `${m.alarm}: ${identity(m.namespace, m.name, m.dimensions)}`);
    // A name, a service or a dimension the functions do not emit would leave its alarm without data forever.
    expect(missing, `emitted:\n${[...written].sort().join('\n')}`).toEqual([]);
    // The scenario reached the pause: the alarm everything else here depends on the breaker for.
    expect(emitted.some((e) => e.name === 'RoutePaused' && e.dimensions.route === ROUTE && e.value === 1)).toBe(true);
  });
});
