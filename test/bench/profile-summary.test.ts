import { describe, expect, it } from 'vitest';
import { bucketOf, bucketsOf } from '../../bench/profile-summary.ts';

describe('the bench profile summary', () => {
  it('puts each frame in its package, Node subsystem, project folder or V8 pseudo-frame', () => {
    expect(bucketOf('file:///w/node_modules/@smithy/core/dist-cjs/index.js', 'f')).toBe('@smithy/core');
    expect(bucketOf('file:///w/node_modules/a/node_modules/valibot/dist/index.js', 'f')).toBe('valibot');
    expect(bucketOf('node:internal/streams/writable', 'doWrite')).toBe('node:streams');
    expect(bucketOf('node:_http_client', 'ClientRequest')).toBe('node:_http_client');
    expect(bucketOf('file:///w/lambdas/ingest/steps/claim.ts', 'claim')).toBe('lambdas/ingest');
    expect(bucketOf('file:///w/lambdas/ingest-context.ts', 'json')).toBe('lambdas/ingest-context');
    expect(bucketOf('', '(garbage collector)')).toBe('(garbage collector)');
    expect(bucketOf('', 'writev')).toBe('(writev)');
  });

  it('sums sampled time per bucket, leaving idle time and the profiler out', () => {
    const frame = (id: number, url: string, functionName = 'f') => ({ id, callFrame: { url, functionName } });
    const profile = {
      nodes: [frame(1, '', '(idle)'), frame(2, 'node:inspector', 'post'), frame(3, 'file:///w/lambdas/store/a.ts'), frame(4, 'file:///w/lambdas/store/b.ts')],
      samples: [1, 2, 3, 4, 3],
      timeDeltas: [500, 70, 10, 20, 30],
    };
    expect([...bucketsOf(profile)]).toEqual([['lambdas/store', 60]]);
  });
});
