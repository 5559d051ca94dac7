/**
 * Bundle size and cold init of each receiver's ingest function. Each entry is bundled the
 * way lib/stateless/retryproof-function.ts bundles retryproof (esbuild, minified ESM,
 * platform node, target node24, module before main, a createRequire banner; for retryproof,
 * its configuration defined into the code), once with
 * the AWS SDK bundled and once with @aws-sdk/* left to the runtime. Cold init is the time
 * to import the bundle in a fresh Node 24 process, the handler's INIT phase in Lambda.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { BuildOptions } from 'esbuild';
import { ENV } from '../lambdas/config/env.ts';
import { SHIPPED_CONFIG_DEFINE } from '../lambdas/config/shipped-config.ts';
import { S3_SDK_BUNDLE_FILE, S3_SDK_FILE_DEFINE } from '../lambdas/store/s3-sdk-file.ts';
import { shippedConfigJson } from '../lib/stateless/shipped-config.ts';
import { benchConfig } from './receivers/retryproof.ts';
import type { ReceiverName } from './receivers/receiver.ts';
import { median } from './stats.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');

export const SDK_MODES = ['sdk-bundled', 'sdk-external'] as const;
export type SdkMode = (typeof SDK_MODES)[number];

/** The deployable entry of each receiver. retryproof's is the real one the stack deploys. */
export const ENTRIES: Readonly<Record<ReceiverName, string>> = {
  retryproof: 'lambdas/ingest/handler.ts',
  powertools: 'bench/entries/powertools-ingest.ts',
  naive: 'bench/entries/naive-ingest.ts',
};

export interface BundleFigure {
  readonly receiver: ReceiverName | 'floor';
  readonly mode: SdkMode;
  readonly bytes: number;
  readonly gzipBytes: number;
  /** Output bytes by origin: a package (scope/name) or `project`. */
  readonly byOrigin: Record<string, number>;
  readonly initMs: readonly number[];
  /** CPU time (user + system) of the same imports: less disturbed by other jobs on the machine. */
  readonly initCpuMs: readonly number[];
}

/**
 * The environment each handler reads at import, and nothing else: every endpoint is a
 * closed loopback port and the credentials are fake, so nothing can reach AWS.
 */
export function coldInitEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    AWS_LAMBDA_FUNCTION_NAME: 'bench-ingest',
    POWERTOOLS_SERVICE_NAME: 'bench-ingest',
    POWERTOOLS_METRICS_NAMESPACE: 'Retryproof',
    // Every variable of the stack's contract, whatever it holds now: names, loopback URLs, fake ARNs.
    ...Object.fromEntries(
      Object.values(ENV).map((name) => [
        name,
        name.endsWith('_URL')
          ? 'http://127.0.0.1:9/000000000000/bench'
          : name.endsWith('_ARN')
            ? 'arn:aws:sns:us-east-1:000000000000:bench'
            : 'bench',
      ]),
    ),
    IDEMPOTENCY_TABLE: 'bench-idempotency',
    KEYS_TABLE: 'bench-keys',
    QUEUE_URL: 'http://127.0.0.1:9/000000000000/bench',
  };
}

/** The configuration retryproof's bundle carries, as the construct writes it: the bench's one route, on the shared queue. */
export function coldInitShippedConfig(): string {
  return shippedConfigJson(benchConfig(), new Map());
}

/** What lib/stateless/retryproof-function.ts gives esbuild for every function (and the reconcile bench, for its runner). */
export const LAMBDA_BUILD = {
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  mainFields: ['module', 'main'],
  banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
} as const satisfies BuildOptions;

function originOf(input: string): string {
  const at = input.lastIndexOf('node_modules/');
  if (at === -1) return 'project';
  const parts = input.slice(at + 'node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') === true ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? 'unknown');
}

async function bundle(
  name: ReceiverName | 'floor',
  mode: SdkMode,
  outDir: string,
): Promise<Omit<BundleFigure, 'initMs' | 'initCpuMs'> & { file: string }> {
  // A folder each, as a function's asset: the S3 SDK's file sits beside its bundle.
  mkdirSync(join(outDir, `${name}-${mode}`), { recursive: true });
  const file = join(outDir, `${name}-${mode}`, 'index.mjs');
  const result = await build({
    ...(name === 'floor'
      ? { stdin: { contents: 'export const handler = async () => ({ statusCode: 202 });', resolveDir: ROOT, loader: 'ts' as const } }
      : { entryPoints: [join(ROOT, ENTRIES[name])] }),
    outfile: file,
    ...LAMBDA_BUILD,
    ...(name === 'retryproof'
      ? { define: { [SHIPPED_CONFIG_DEFINE]: JSON.stringify(coldInitShippedConfig()), [S3_SDK_FILE_DEFINE]: JSON.stringify(`./${S3_SDK_BUNDLE_FILE}`) } }
      : {}),
    external: mode === 'sdk-external' ? ['@aws-sdk/*'] : [],
    metafile: true,
    logLevel: 'error',
  });
  // The S3 SDK's own file, as the construct writes it (docs/architecture.md#large-bodies-off-the-cold-path); a cold start never reads it.
  if (name === 'retryproof') await buildS3SdkFile(join(outDir, `${name}-${mode}`, S3_SDK_BUNDLE_FILE), mode);
  const code = readFileSync(file);
  const byOrigin: Record<string, number> = {};
  const output = Object.values(result.metafile.outputs)[0];
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const origin = originOf(input);
    byOrigin[origin] = (byOrigin[origin] ?? 0) + bytesInOutput;
  }
  return { receiver: name, mode, bytes: code.length, gzipBytes: gzipSync(code).length, byOrigin, file };
}

function buildS3SdkFile(outfile: string, mode: SdkMode) {
  return build({
    entryPoints: [join(ROOT, 'lambdas/store/s3-sdk.ts')],
    outfile,
    ...LAMBDA_BUILD,
    external: mode === 'sdk-external' ? ['@aws-sdk/*'] : [],
    logLevel: 'error',
  });
}

/** Child program: time the import of the bundle, check it exports a handler. */
const CHILD = `
const c0 = process.cpuUsage();
const t0 = performance.now();
const mod = await import(process.argv[1]);
const t1 = performance.now();
const cpu = process.cpuUsage(c0);
if (typeof mod.handler !== 'function') throw new Error('the bundle exports no handler');
process.stdout.write(JSON.stringify({ importMs: t1 - t0, cpuMs: (cpu.user + cpu.system) / 1000 }));
`;

/**
 * Bundles every entry in both modes and imports each `runs` times in fresh processes,
 * interleaved so a slow moment of the machine falls on all of them alike.
 */
export async function measureBundles(options: { readonly runs: number; readonly log: (line: string) => void }): Promise<BundleFigure[]> {
  // Under the repository's node_modules: an external @aws-sdk/* resolves from there, as the runtime's would,
  // and neither git nor the linter looks at it.
  const outDir = join(ROOT, 'node_modules', '.cache', 'retryproof-bench');
  mkdirSync(outDir, { recursive: true });
  const names: (ReceiverName | 'floor')[] = ['retryproof', 'powertools', 'naive', 'floor'];
  const built = await Promise.all(names.flatMap((name) => SDK_MODES.map((mode) => bundle(name, mode, outDir))));
  for (const b of built) {
    options.log(`  bundled ${b.receiver} (${b.mode}): ${b.bytes} bytes, ${b.gzipBytes} gzip  [${relative(ROOT, b.file)}]`);
  }
  const samples = new Map<string, { wall: number[]; cpu: number[] }>(built.map((b) => [b.file, { wall: [], cpu: [] }]));
  const env = coldInitEnv();
  for (let i = 0; i < options.runs; i++) {
    const order = i % 2 === 0 ? built : [...built].reverse();
    for (const b of order) {
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', CHILD, pathToFileURL(b.file).href], { env }).catch(
        (err: unknown) => {
          const stderr = (err as { stderr?: string }).stderr ?? '';
          throw new Error(`importing ${relative(ROOT, b.file)} failed: ${stderr.split('\n').filter((l) => l.startsWith('Error')).join(' ') || 'see its stderr'}`);
        },
      );
      const sample = JSON.parse(stdout) as { importMs: number; cpuMs: number };
      samples.get(b.file)?.wall.push(sample.importMs);
      samples.get(b.file)?.cpu.push(sample.cpuMs);
    }
    options.log(`  cold init round ${i + 1}/${options.runs} done`);
  }
  return built.map(({ file, ...b }) => ({ ...b, initMs: samples.get(file)?.wall ?? [], initCpuMs: samples.get(file)?.cpu ?? [] }));
}

/** The median import time of a figure. */
export function coldInitMs(figure: BundleFigure): number {
  return median(figure.initMs);
}
