/**
 * The 401 alarm of a route reads what the real ingest emits on a 401: the template's math
 * (SignatureRejected over Deliveries, per route), and the EMF the handler writes when a delivery
 * comes signed with the wrong secret, under the same namespace, name and dimension set.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { createIngestHandler } from '../../lambdas/ingest/create-ingest-handler.ts';
import { prepareRoutes } from '../../lambdas/ingest/prepared-route.ts';
import { SERVICE } from '../../lambdas/observability/metric-catalogue.ts';
import { createLogger, createMetrics } from '../../lambdas/observability/powertools.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { httpApiEvent, lambdaContext } from '../../local/http-api-event.ts';
import { StaticSecretSource } from '../../local/static-secret-source.ts';
import { config } from '../../retryproof.config.ts';
import { SIGNATURE_REJECTED_MIN_DELIVERIES, SIGNATURE_REJECTED_PERIODS, SIGNATURE_REJECTED_SHARE } from '../../lib/stateless/signature-rejection-alarm.ts';
import { synthesize } from '../cdk/stack-fixture.ts';
import { SCHEME_ROUTES, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { testConfig } from '../support/test-config.ts';
import { captureEmf } from './emf-capture.ts';
import type { EmittedMetric } from './emf-capture.ts';

interface CfnMetricStat {
  readonly Id: string;
  readonly Expression?: string;
  readonly ReturnData?: boolean;
  readonly MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: string }[] }; Stat: string; Period: number };
}
interface CfnAlarm {
  readonly Properties: { AlarmName: string; Metrics: CfnMetricStat[]; Threshold: number; EvaluationPeriods: number; ComparisonOperator: string; TreatMissingData: string };
}

const ROUTE = 'stripe';

/** One CloudWatch metric is one exact set of dimensions, in any order. */
function sameDimensions(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const text = (d: Readonly<Record<string, string>>) => JSON.stringify(Object.entries(d).sort(([x], [y]) => x.localeCompare(y)));
  return text(a) === text(b);
}

describe('the signature-rejection alarm of each route', () => {
  let alarms: CfnAlarm[];

  beforeAll(() => {
    const built = synthesize(config);
    alarms = Object.values(built.template.findResources('AWS::CloudWatch::Alarm') as Record<string, CfnAlarm>).filter((a) =>
      a.Properties.AlarmName.startsWith('Retryproof-signature-rejections-'),
    );
  });

  it('is one alarm per route, on the share of its deliveries answered 401', () => {
    const routes = resolveConfig(config).routes.map((r) => r.name);
    expect(alarms.map((a) => a.Properties.AlarmName).sort()).toEqual(routes.map((r) => `Retryproof-signature-rejections-${r}`).sort());
    for (const alarm of alarms) {
      const p = alarm.Properties;
      const expression = p.Metrics.find((m) => m.ReturnData !== false && m.Expression !== undefined);
      const [deliveries, rejected] = ['sigDeliveries0', 'rejected0'].map((id) => p.Metrics.find((m) => m.Id === id)?.MetricStat);
      expect(expression?.Expression).toBe(`IF(sigDeliveries0 >= ${SIGNATURE_REJECTED_MIN_DELIVERIES}, rejected0 / sigDeliveries0, 0)`);
      expect(deliveries).toMatchObject({ Metric: { MetricName: 'Deliveries' }, Stat: 'Sum', Period: 300 });
      expect(rejected).toMatchObject({ Metric: { MetricName: 'SignatureRejected' }, Stat: 'Sum', Period: 300 });
      expect(rejected?.Metric.Dimensions).toEqual(deliveries?.Metric.Dimensions);
      expect(p).toMatchObject({
        Threshold: SIGNATURE_REJECTED_SHARE,
        EvaluationPeriods: SIGNATURE_REJECTED_PERIODS,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('reads the metric the real ingest emits when a delivery is signed with the wrong secret', async () => {
    // Prepare: the real handler, wired as lambdas/ingest/handler.ts wires it, with the ingest's service name.
    const fixture = testConfig(SCHEME_ROUTES.filter((r) => r.name === ROUTE));
    const secrets = new StaticSecretSource(Object.fromEntries(SCHEME_ROUTES.map((r) => [r.secretName, r.secret])));
    let status: number | undefined;
    // Act: a Stripe delivery signed with a secret the receiver does not hold.
    const emitted: EmittedMetric[] = await captureEmf(async () => {
      const ingest = createIngestHandler({
        routes: prepareRoutes(resolveConfig(fixture).routes),
        store: new DynamoDbEventStore(localDynamoClient(inject('dynamoEndpoint')), inject('eventsTable')),
        queue: new SqsWorkQueue(localSqsClient(inject('sqsEndpoint')), `${inject('sqsEndpoint')}/000000000000/never-sent-to`),
        secrets,
        now: Date.now,
        logger: createLogger(SERVICE.ingest),
        metrics: createMetrics(SERVICE.ingest),
      });
      const forged = signedDelivery(ROUTE, uniqueKey(ROUTE), { secret: 'whsec_not_the_receivers_secret' });
      status = (await ingest(httpApiEvent({ route: ROUTE, body: forged.body, headers: forged.headers }), lambdaContext())).statusCode;
    });
    // Assess: a 401, counted under exactly the namespace, name and dimensions the alarm reads.
    expect(status).toBe(401);
    const alarm = alarms.find((a) => a.Properties.AlarmName === `Retryproof-signature-rejections-${ROUTE}`);
    for (const id of ['rejected0', 'sigDeliveries0']) {
      const read = alarm?.Properties.Metrics.find((m) => m.Id === id)?.MetricStat?.Metric;
      expect(read).toBeDefined();
      const wanted = Object.fromEntries((read?.Dimensions ?? []).map((d) => [d.Name, d.Value]));
      const match = emitted.filter((e) => e.namespace === read?.Namespace && e.name === read.MetricName && sameDimensions(e.dimensions, wanted));
      expect(match.map((e) => e.value), `${read?.MetricName} ${JSON.stringify(wanted)} in:\n${emitted.map((e) => `${e.namespace} ${e.name} ${JSON.stringify(e.dimensions)}`).join('\n')}`).toEqual([1]);
    }
  });
});
