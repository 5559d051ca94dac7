/**
 * What a plain route's cold start reads: none of the S3 SDK, needed only by a large body. The
 * store imports lambdas/store/s3-sdk.ts by a name it computes (lambdas/store/s3-sdk-file.ts), so
 * esbuild leaves the SDK out of the bundle, and the construct writes it into a file of its own
 * (docs/architecture.md#large-bodies-off-the-cold-path; test/cdk/cdk-synth.test.ts checks that file).
 * Checked on esbuild's own import graph of each function, bundled with the construct's define.
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { S3_SDK_BUNDLE_FILE, S3_SDK_FILE_DEFINE, s3SdkSpecifier } from '../../lambdas/store/s3-sdk-file.ts';

async function bundled(entry: string) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    outdir: 'unused',
    format: 'esm',
    platform: 'node',
    metafile: true,
    logLevel: 'error',
    define: { [S3_SDK_FILE_DEFINE]: JSON.stringify(`./${S3_SDK_BUNDLE_FILE}`) },
  });
  return { inputs: Object.keys(result.metafile.inputs), code: result.outputFiles.map((f) => f.text).join('\n') };
}

describe.each(['lambdas/ingest/handler.ts', 'lambdas/executor/lambda.ts', 'lambdas/reconciler/lambda.ts'])('the bundle of %s', (entry) => {
  it('holds none of the S3 SDK, and names its side file', async () => {
    const { inputs, code } = await bundled(entry);
    expect(inputs.filter((i) => i.includes('node_modules/@aws-sdk/client-s3/') || i === 'lambdas/store/s3-sdk.ts')).toEqual([]);
    expect(code).toContain(`"./${S3_SDK_BUNDLE_FILE}"`);
  });
});

describe('s3SdkSpecifier', () => {
  it('names s3-sdk beside the importing module when unbundled, with its extension', () => {
    expect(s3SdkSpecifier('file:///app/lambdas/store/s3-body-objects.ts')).toBe('./s3-sdk.ts');
    expect(s3SdkSpecifier('file:///app/dist/lambdas/store/s3-body-objects.js')).toBe('./s3-sdk.js');
  });
});
