import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { METRICS_NAMESPACE } from '../../lambdas/observability/metric-catalogue.ts';
import { executorFixture, ROUTE } from '../support/executor-fixture.ts';
import { signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

interface EmittedMetric {
  readonly name: string;
  readonly unit: string;
  readonly value: unknown;
  readonly dimensions: Record<string, string>;
}

/** Flattens EMF documents into one row per metric, with the dimensions it was emitted under. */
function flatten(documents: Record<string, unknown>[]): EmittedMetric[] {
  const rows: EmittedMetric[] = [];
  for (const doc of documents) {
    const aws = doc._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
    for (const directive of aws.CloudWatchMetrics) {
      expect(directive.Namespace).toBe(METRICS_NAMESPACE);
      const dimensions = Object.fromEntries((directive.Dimensions[0] ?? []).map((d) => [d, String(doc[d])]));
      for (const metric of directive.Metrics) rows.push({ name: metric.Name, unit: metric.Unit, value: doc[metric.Name], dimensions });
    }
  }
  return rows;
}

describe('the EMF metrics of a scenario: new, duplicate, 422, 401, execution, DLQ arrival', () => {
  const written: string[] = [];
  let rows: EmittedMetric[] = [];
  const previous = process.env.POWERTOOLS_METRICS_DISABLED;

  beforeAll(async () => {
    // Prepare: metrics on (the suite turns them off), stdout captured.
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(chunk.toString());
      return true;
    });
    try {
      const fx = await executorFixture();
      // Act
      const key = uniqueKey(ROUTE);
      const delivery = signedDelivery(ROUTE, key, { payload: { amount: 10 } });
      await fx.ingest.invoke(delivery); // 202, new
      await fx.ingest.invoke(delivery); // 202, replayed duplicate
      await fx.ingest.invoke(signedDelivery(ROUTE, key, { payload: { amount: 11 } })); // 422
      await fx.ingest.invoke({ ...delivery, body: delivery.body.replace('10', '12') }); // 401
      await fx.deliver({ amount: 1, simulate: { permanentError: true } }); // 202, then a DLQ arrival
      await fx.drain();
    } finally {
      spy.mockRestore();
    }
    const documents = written
      .flatMap((chunk) => chunk.split('\n'))
      .filter((line) => line.startsWith('{') && line.includes('"_aws"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    rows = flatten(documents);
  });

  afterAll(() => {
    if (previous === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = previous;
  });

  const find = (name: string, dimensions: Record<string, string>): EmittedMetric[] =>
    rows.filter((r) => r.name === name && Object.entries(dimensions).every(([k, v]) => r.dimensions[k] === v));
  const total = (name: string, dimensions: Record<string, string>): number =>
    find(name, dimensions).reduce((sum, r) => sum + (Array.isArray(r.value) ? (r.value as number[]).reduce((a, b) => a + b, 0) : Number(r.value)), 0);

  it('counts every delivery per route, under the service and route dimensions', () => {
    expect(total('Deliveries', { route: ROUTE })).toBe(5);
    const dims = find('Deliveries', { route: ROUTE })[0]?.dimensions;
    expect(Object.keys(dims ?? {}).sort()).toEqual(['route', 'service']);
  });

  it('counts answers by status code', () => {
    expect(total('Answers', { route: ROUTE, status: '202' })).toBe(3);
    expect(total('Answers', { route: ROUTE, status: '422' })).toBe(1);
    expect(total('Answers', { route: ROUTE, status: '401' })).toBe(1);
    expect(find('Answers', { route: ROUTE })[0]?.unit).toBe('Count');
  });

  it('counts the duplicate, classifies its retry cause by the previous answer, and measures its TTL coverage', () => {
    expect(total('DuplicatesIntercepted', { route: ROUTE })).toBe(1);
    expect(total('RetryCause', { route: ROUTE, previousStatus: '202' })).toBe(1);
    const age = find('DuplicateAgeShareOfTtl', { route: ROUTE });
    expect(age).toHaveLength(1);
    expect(age[0]?.unit).toBe('Percent');
    expect(Number(age[0]?.value)).toBeLessThan(1);
  });

  it('counts the 422 and the 401', () => {
    expect(total('KeyReused', { route: ROUTE })).toBe(1);
    expect(total('SignatureRejected', { route: ROUTE })).toBe(1);
  });

  it('counts executions by outcome, the DLQ arrival and the failure', () => {
    expect(total('Executions', { route: ROUTE, outcome: 'completed' })).toBe(1);
    expect(total('Executions', { route: ROUTE, outcome: 'permanent-error' })).toBe(1);
    expect(total('DlqArrivals', { route: ROUTE })).toBe(1);
    expect(total('Failed', { route: ROUTE })).toBe(1);
    const share = find('ActionShareOfLease', { route: ROUTE });
    expect(share).toHaveLength(1);
    expect(share[0]?.unit).toBe('Percent');
  });
});
