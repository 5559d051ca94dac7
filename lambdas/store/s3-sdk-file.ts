/**
 * The S3 SDK's own file in a function's bundle: the construct bundles lambdas/store/s3-sdk.ts
 * beside the handler's bundle, so a cold start neither evaluates nor compiles it
 * (docs/architecture.md#large-bodies-off-the-cold-path). Pure, so the construct, the bench and the store share it.
 */

/** The expression esbuild replaces, in a bundle, with the side file's name relative to the bundle. */
export const S3_SDK_FILE_DEFINE = 'globalThis.RETRYPROOF_S3_SDK_FILE';

/** The side file's name beside the bundle's index.mjs. */
export const S3_SDK_BUNDLE_FILE = 's3-sdk.mjs';

/**
 * What the store imports: in a bundle, the side file the construct wrote; from the sources or
 * the compiled package, s3-sdk.ts or .js beside the importing module.
 */
export function s3SdkSpecifier(importerUrl: string): string {
  // The whole expression is S3_SDK_FILE_DEFINE: esbuild replaces it with a string literal.
  const bundled = (globalThis as { RETRYPROOF_S3_SDK_FILE?: string }).RETRYPROOF_S3_SDK_FILE;
  return bundled ?? `./s3-sdk${importerUrl.slice(importerUrl.lastIndexOf('.'))}`;
}
