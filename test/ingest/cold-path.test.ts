/**
 * What a plain route's cold start evaluates: the S3 SDK, needed only by a large body, is reached
 * through a dynamic import alone (lambdas/store/s3-body-objects.ts), so the bundle evaluates it at
 * the first large body, never at init. Checked on esbuild's own import graph of each function.
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

async function importsOf(entry: string): Promise<Record<string, { imports: { path: string; kind: string }[] }>> {
  const result = await build({ entryPoints: [entry], bundle: true, write: false, outdir: 'unused', format: 'esm', platform: 'node', metafile: true, logLevel: 'error' });
  return result.metafile.inputs;
}

describe.each(['lambdas/ingest/handler.ts', 'lambdas/executor/lambda.ts'])('the cold path of %s', (entry) => {
  it('reaches the S3 SDK only through a dynamic import', async () => {
    const inputs = await importsOf(entry);
    const edges = Object.entries(inputs).flatMap(([from, { imports }]) => imports.map((i) => ({ from, ...i })));
    const intoS3 = edges.filter((e) => e.path.includes('node_modules/@aws-sdk/client-s3/') && !e.from.includes('node_modules/@aws-sdk/client-s3/'));
    expect(intoS3.map((e) => e.from)).toEqual(['lambdas/store/s3-sdk.ts']);
    const intoSdkModule = edges.filter((e) => e.path === 'lambdas/store/s3-sdk.ts');
    expect(intoSdkModule.length).toBeGreaterThan(0);
    expect(new Set(intoSdkModule.map((e) => e.kind))).toEqual(new Set(['dynamic-import']));
  });
});
