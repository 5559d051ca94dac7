/**
 * Measures what the signature verifiers cost inside a Lambda: the reference libraries
 * (`standardwebhooks`, `@octokit/webhooks-methods`) against this project's own modules.
 * Each entry is bundled as the ingest would be (esbuild, minified, ESM, platform node),
 * then imported in fresh Node processes to time a cold import, the first verify and the
 * steady-state verify.
 *
 *   npx node scripts/measure-verifier-bundles.ts [runs]
 *
 * `npx node` runs the node@24 devDependency; plain `node` on these machines is Node 20.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { parseFlags } from '../cli/args.ts';
import { UsageError } from '../cli/errors.ts';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(`node ${process.versions.node}: run this with "npx node ..." so the node@24 devDependency is used`);
  process.exit(1);
}

const root = resolve(import.meta.dirname, '..');
const sig = (file: string): string => JSON.stringify(join(root, 'lambdas/domain/signatures', file));
const USAGE = 'usage: npx node scripts/measure-verifier-bundles.ts [runs]   (fresh processes per entry, default 21)';

/** The number of runs, the one argument: a usage error is one line and exit code 2. */
function runsOf(argv: readonly string[]): number {
  try {
    const { values, positionals } = parseFlags(argv, { help: { type: 'boolean', short: 'h' } }, USAGE);
    if (values.help === true) {
      console.log(USAGE);
      process.exit(0);
    }
    if (positionals.length > 1) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[1])}`, USAGE);
    const text = positionals[0];
    if (text !== undefined && (!/^\d+$/.test(text) || Number(text) < 1)) throw new UsageError(`runs must be a whole number of 1 or more, got ${JSON.stringify(text)}`, USAGE);
    return text === undefined ? 21 : Number(text);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`measure-verifier-bundles: ${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
}

const runs = runsOf(process.argv.slice(2));

/** Which delivery the child builds; `floor` is a GitHub delivery for the do-nothing entry. */
type Kind = 'standard-webhooks' | 'github' | 'floor';

interface Entry {
  readonly name: string;
  readonly kind: Kind;
  /** Source of an ESM module exporting `run(input)`: true when the delivery verifies. */
  readonly source: string;
}

const entries: readonly Entry[] = [
  {
    name: 'ref standardwebhooks Webhook.verify',
    kind: 'standard-webhooks',
    source: `import { Webhook } from 'standardwebhooks';
export function run(i) {
  // One secret per call, and a failure is an exception: rotation means a try/catch per secret.
  for (const s of i.secrets) { try { new Webhook(s).verify(i.body, i.headers); return true; } catch {} }
  return false;
}`,
  },
  {
    name: 'own standard-webhooks.ts',
    kind: 'standard-webhooks',
    source: `import { createStandardWebhooksVerifier } from ${sig('standard-webhooks.ts')};
const v = createStandardWebhooksVerifier();
export function run(i) { return v.verify({ headers: i.headers, rawBody: i.body, nowSeconds: i.now }, i.secrets).ok; }`,
  },
  {
    name: 'ref @octokit/webhooks-methods verify',
    kind: 'github',
    source: `import { verifyWithFallback } from '@octokit/webhooks-methods';
export function run(i) {
  // async, and the payload must be a string: the raw bytes go through a UTF-8 round trip.
  return verifyWithFallback(i.secrets[0], i.body.toString('utf8'), i.headers['x-hub-signature-256'], i.secrets.slice(1));
}`,
  },
  {
    name: 'own github.ts',
    kind: 'github',
    source: `import { createGithubVerifier } from ${sig('github.ts')};
const v = createGithubVerifier();
export function run(i) { return v.verify({ headers: i.headers, rawBody: i.body, nowSeconds: i.now }, i.secrets).ok; }`,
  },
  {
    name: 'own create-verifier.ts (all six)',
    kind: 'standard-webhooks',
    source: `import { createVerifier } from ${sig('create-verifier.ts')};
const v = createVerifier({ scheme: 'standard-webhooks' });
export function run(i) { return v.verify({ headers: i.headers, rawBody: i.body, nowSeconds: i.now }, i.secrets).ok; }`,
  },
  {
    name: 'empty module (process floor)',
    kind: 'floor',
    source: `export function run() { return true; }`,
  },
];

/** Child program: times the import, the first verify and 2,000 more. Inputs are made here, unbundled. */
const CHILD = `
const { createHmac } = await import('node:crypto');
const [url, kind, secretsJson] = process.argv.slice(1);
const secrets = JSON.parse(secretsJson);
const body = Buffer.from(JSON.stringify({ id: 'evt_1', data: 'x'.repeat(2000) }));
const now = Math.floor(Date.now() / 1000);
let headers;
if (kind !== 'standard-webhooks') {
  headers = { 'x-hub-signature-256': 'sha256=' + createHmac('sha256', secrets[1]).update(body).digest('hex') };
} else {
  const key = Buffer.from(secrets[1].slice(6), 'base64');
  const mac = createHmac('sha256', key).update('msg_1.' + now + '.').update(body).digest('base64');
  headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(now), 'webhook-signature': 'v1,' + mac };
}
const input = { secrets, body, headers, now };
const t0 = performance.now();
const mod = await import(url);
const t1 = performance.now();
if (!(await mod.run(input))) throw new Error('the first verify failed');
const t2 = performance.now();
for (let n = 0; n < 2000; n++) if (!(await mod.run(input))) throw new Error('a verify failed');
const t3 = performance.now();
// A verifier that accepts anything would measure fast; the current secret alone must not verify.
if (kind !== 'floor' && (await mod.run({ ...input, secrets: [secrets[0]] }))) throw new Error('accepted the wrong secret');
console.log(JSON.stringify({ importMs: t1 - t0, firstMs: t2 - t1, perVerifyUs: ((t3 - t2) / 2000) * 1000 }));
`;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const dir = mkdtempSync(join(tmpdir(), 'verifier-bundles-'));
try {
  const built = await Promise.all(
    entries.map(async (entry, index) => {
      const result = await build({
        stdin: { contents: entry.source, resolveDir: root, loader: 'ts', sourcefile: `entry-${index}.ts` },
        bundle: true,
        minify: true,
        format: 'esm',
        platform: 'node',
        target: 'node24',
        write: false,
        logLevel: 'error',
      });
      const code = result.outputFiles[0]!.contents;
      const file = join(dir, `entry-${index}.mjs`);
      writeFileSync(file, code);
      return { entry, file, bytes: code.length, gzipBytes: gzipSync(code).length };
    }),
  );

  // The current secret does not match; the previous one does, so every entry does the rotation work.
  const secrets = {
    'standard-webhooks': [`whsec_${randomBytes(32).toString('base64')}`, `whsec_${randomBytes(32).toString('base64')}`],
    github: [randomBytes(20).toString('hex'), randomBytes(20).toString('hex')],
    floor: ['unused', 'unused'],
  } satisfies Record<Kind, string[]>;

  const samples = new Map<string, { importMs: number[]; firstMs: number[]; perVerifyUs: number[] }>();
  for (let run = 0; run < runs; run++) {
    for (const { entry, file } of built) {
      const out = execFileSync(
        process.execPath,
        ['--input-type=module', '-e', CHILD, pathToFileURL(file).href, entry.kind, JSON.stringify(secrets[entry.kind])],
        { encoding: 'utf8' },
      );
      const sample = JSON.parse(out) as { importMs: number; firstMs: number; perVerifyUs: number };
      const bucket = samples.get(entry.name) ?? { importMs: [], firstMs: [], perVerifyUs: [] };
      bucket.importMs.push(sample.importMs);
      bucket.firstMs.push(sample.firstMs);
      bucket.perVerifyUs.push(sample.perVerifyUs);
      samples.set(entry.name, bucket);
    }
  }

  console.log(`node ${process.versions.node}, esbuild minified ESM platform=node, ${runs} fresh processes each, medians`);
  console.log(
    `${'entry'.padEnd(36)} ${'bytes'.padStart(7)} ${'gzip'.padStart(6)} ${'import ms'.padStart(10)} ${'1st verify ms'.padStart(14)} ${'verify us'.padStart(10)}`,
  );
  for (const { entry, bytes, gzipBytes } of built) {
    const s = samples.get(entry.name)!;
    console.log(
      `${entry.name.padEnd(36)} ${String(bytes).padStart(7)} ${String(gzipBytes).padStart(6)} ${median(s.importMs).toFixed(2).padStart(10)} ${median(s.firstMs).toFixed(2).padStart(14)} ${median(s.perVerifyUs).toFixed(1).padStart(10)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
