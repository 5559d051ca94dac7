/** The project's Metrics: an invocation with nothing to count prints nothing; the rest is Powertools' own behaviour. */
import middy from '@middy/core';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { addMetricUnder, createMetrics } from '../../lambdas/observability/powertools.ts';

describe('createMetrics', () => {
  const written: string[] = [];
  const previous = process.env.POWERTOOLS_METRICS_DISABLED;
  beforeEach(() => {
    // Metrics on (the suite turns them off); Powertools writes through its own Console on both streams.
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    written.length = 0;
    const capture = (chunk: string | Uint8Array): boolean => {
      written.push(chunk.toString());
      return true;
    };
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    if (previous === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = previous;
  });

  it('prints nothing for an invocation that counted nothing, however many run', async () => {
    // Prepare
    const metrics = createMetrics('retryproof-test');
    const handler = middy(() => Promise.resolve('ok')).use(logMetrics(metrics));
    // Act
    for (let i = 0; i < 3; i++) await handler({}, {} as never);
    // Assess
    expect(written.join('')).toBe('');
  });

  it('still publishes what an invocation counted, and starts the next one with no leftover dimension', async () => {
    // Prepare
    const metrics = createMetrics('retryproof-test');
    let count = true;
    const handler = middy(() => {
      if (count) {
        metrics.addDimension('route', 'demo');
        metrics.addMetric('Deliveries', MetricUnit.Count, 1);
      }
      return Promise.resolve('ok');
    }).use(logMetrics(metrics));
    // Act
    await handler({}, {} as never);
    count = false;
    await handler({}, {} as never);
    metrics.addMetric('Deliveries', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    // Assess
    const documents = written.join('').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(documents).toHaveLength(2);
    expect(documents[0]).toMatchObject({ route: 'demo', Deliveries: 1 });
    expect(documents[1]).not.toHaveProperty('route');
    expect(written.join('')).not.toContain('No application metrics');
  });

  it('keeps throwOnEmptyMetrics: an empty flush then throws, as the caller asked', () => {
    const metrics = createMetrics('retryproof-test').setThrowOnEmptyMetrics(true);
    expect(() => metrics.publishStoredMetrics()).toThrow(/metrics/i);
  });

  it.each([
    ['the receiver\'s namespace the construct sets', 'Shop-Orders', 'Shop-Orders'],
    ['Retryproof when none is set, as on the local stack', undefined, 'Retryproof'],
  ])('emits into %s', (_what, set, expected) => {
    // Prepare
    const before = process.env.POWERTOOLS_METRICS_NAMESPACE;
    if (set === undefined) delete process.env.POWERTOOLS_METRICS_NAMESPACE;
    else process.env.POWERTOOLS_METRICS_NAMESPACE = set;
    try {
      const metrics = createMetrics('retryproof-test');
      // Act
      metrics.addMetric('Deliveries', MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    } finally {
      if (before === undefined) delete process.env.POWERTOOLS_METRICS_NAMESPACE;
      else process.env.POWERTOOLS_METRICS_NAMESPACE = before;
    }
    // Assess
    const [document] = written.join('').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { _aws: { CloudWatchMetrics: { Namespace: string }[] } });
    expect(document?._aws.CloudWatchMetrics[0]?.Namespace).toBe(expected);
  });

  it('writes a metric under dimensions of its own into the invocation\'s one document, as a directive of its own', async () => {
    // Prepare
    const metrics = createMetrics('retryproof-test');
    const handler = middy(() => {
      metrics.addDimension('route', 'demo');
      metrics.addMetric('Deliveries', MetricUnit.Count, 1);
      addMetricUnder(metrics, { route: 'demo', status: '202' }, 'Answers', MetricUnit.Count, 1);
      return Promise.resolve('ok');
    }).use(logMetrics(metrics));
    // Act
    await handler({}, {} as never);
    // Assess: one line, two directives, each with its own dimension set over the same members.
    const lines = written.join('').split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    const doc = JSON.parse(lines[0] ?? '{}') as { _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] } } & Record<string, unknown>;
    expect(doc._aws.CloudWatchMetrics.map((d) => [d.Dimensions, d.Metrics.map((m) => m.Name)])).toEqual([
      [[['service', 'route']], ['Deliveries']],
      [[['service', 'route', 'status']], ['Answers']],
    ]);
    expect(doc).toMatchObject({ service: 'retryproof-test', route: 'demo', status: '202', Deliveries: 1, Answers: 1 });
  });

  it('writes an attached metric in a document of its own when its dimension clashes with the invocation\'s, or when nothing else was counted', async () => {
    // Prepare
    const metrics = createMetrics('retryproof-test');
    let withOwn = true;
    const handler = middy(() => {
      if (withOwn) {
        metrics.addDimension('route', 'demo');
        metrics.addMetric('Deliveries', MetricUnit.Count, 1);
      }
      addMetricUnder(metrics, { route: 'other', status: '500' }, 'Answers', MetricUnit.Count, 1);
      return Promise.resolve('ok');
    }).use(logMetrics(metrics));
    // Act
    await handler({}, {} as never);
    withOwn = false;
    await handler({}, {} as never);
    // Assess: the clash and the lone metric each went out alone, under their own dimensions.
    const docs = written
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(docs.filter((d) => d.Answers === 1).map((d) => [d.route, d.status])).toEqual([
      ['other', '500'],
      ['other', '500'],
    ]);
    expect(docs.filter((d) => d.Deliveries === 1)).toHaveLength(1);
    expect(docs.find((d) => d.Deliveries === 1)?.route).toBe('demo');
  });
});
