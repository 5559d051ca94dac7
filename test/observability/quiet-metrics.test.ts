/** The project's Metrics: an invocation with nothing to count prints nothing; the rest is Powertools' own behaviour. */
import middy from '@middy/core';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMetrics } from '../../lambdas/observability/powertools.ts';

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
});
