/**
 * The package as a user gets it: `npm pack` of this repository, installed offline into a
 * plain-JavaScript CDK app outside the repository, which synthesizes one stack holding two
 * WebhookReceivers. Node strips no types under node_modules, so this is the test that the
 * package ships JavaScript that runs, declares every package it imports, and bundles each
 * receiver's own action code into that receiver's executor.
 */
import { execFile } from 'node:child_process';
import type { ExecFileOptions } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerLock } from './consumer-lock.ts';
import type { PackageLock } from './consumer-lock.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Measured at 17 to 33 s on two shared cores (pack 6 to 12 s, install 6 to 15 s, synth 5 to 6 s); CI's whole budget is 10 minutes. */
const SUITE_TIMEOUT_MS = 180_000;
const MAX_OUTPUT = 64 * 1024 * 1024;
const execFileAsync = promisify(execFile);

/**
 * Runs a command; when it fails, the error carries its stdout as well as its stderr
 * (tsc, run by prepack, prints its errors on stdout).
 */
async function run(file: string, args: readonly string[], options: ExecFileOptions): Promise<{ stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(file, args, { ...options, encoding: 'utf8', maxBuffer: MAX_OUTPUT });
    return { stdout, stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed in ${String(options.cwd)}:\n${stdout.slice(-8000)}\n${stderr.slice(-8000)}`, { cause: error });
  }
}

/** Strings only one action or ledger module holds, found again in the bundles. */
const MARKER = {
  charge: 'consumer-charge-action-7d41',
  ship: 'consumer-ship-action-c93e',
  shipLedger: 'consumer-shipments-ledger-5b20',
} as const;

/** The consumer's own code, as a user writes it: plain ESM JavaScript, no TypeScript. */
const CONSUMER_FILES: Readonly<Record<string, string>> = {
  'actions/charge.js': `import { PermanentActionError } from 'retryproof/actions';

export default async function charge(ctx) {
  if (typeof ctx.body !== 'object' || ctx.body === null) {
    throw new PermanentActionError('${MARKER.charge}: the body must be JSON');
  }
  return { charged: ctx.idempotencyKey, by: '${MARKER.charge}' };
}
`,
  'actions/ship.js': `import { RetryableActionError } from 'retryproof/actions';
import ledger from '../ledgers/shipments-ledger.js';

export default async function ship(ctx) {
  if (ctx.attempt > 3) throw new RetryableActionError('${MARKER.ship}: carrier busy');
  const entry = await ledger.post({ route: ctx.route, idempotencyKey: ctx.key, postedAt: Date.now() });
  return { entryId: entry.entryId, by: '${MARKER.ship}' };
}
`,
  'ledgers/shipments-ledger.js': `import { LEDGER_STATUS } from 'retryproof/actions';

const entries = new Map();

export default {
  async post(entry) {
    const posted = { ...entry, entryId: '${MARKER.shipLedger}-' + entries.size, status: LEDGER_STATUS.posted };
    entries.set(posted.entryId, posted);
    return posted;
  },
  async listWindow(fromMs, toMs) {
    return [...entries.values()].filter((e) => e.postedAt >= fromMs && e.postedAt < toMs);
  },
  async reverse(entryId, { reversalId, reason, at }) {
    const entry = entries.get(entryId);
    if (entry === undefined) return 'not-found';
    if (entry.status === LEDGER_STATUS.reversed) return 'already-reversed';
    entries.set(entryId, { ...entry, status: LEDGER_STATUS.reversed, reversalId, reversalReason: reason, reversedAt: at });
    return 'reversed';
  },
};
`,
  'app.js': `import { writeFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { WebhookReceiver } from 'retryproof';

const [outdir, idsFile] = process.argv.slice(2);
const app = new App({ outdir });
const stack = new Stack(app, 'Consumer');
const payments = new WebhookReceiver(stack, 'Payments', {
  routes: [
    { name: 'charges', signature: { scheme: 'standard-webhooks' }, secretName: 'consumer/payments/charges', actionTimeSeconds: 10, action: 'charge' },
  ],
  actions: { charge: { entry: './actions/charge.js' } },
});
const orders = new WebhookReceiver(stack, 'Orders', {
  routes: [
    { name: 'shipments', signature: { scheme: 'github' }, secretName: 'consumer/orders/shipments', actionTimeSeconds: 20, action: 'ship' },
    { name: 'returns', signature: { scheme: 'hmac-sha256', header: 'x-signature' }, secretName: 'consumer/orders/returns', actionTimeSeconds: 20, action: 'ship' },
  ],
  actions: { ship: { entry: './actions/ship.js', ledger: './ledgers/shipments-ledger.js' } },
  alarmEmail: 'ops@example.com',
});
const idOf = (fn) => stack.getLogicalId(fn.node.defaultChild);
writeFileSync(idsFile, JSON.stringify({
  Payments: { executor: idOf(payments.executorFunction), reconciler: idOf(payments.reconcilerFunction) },
  Orders: { executor: idOf(orders.executorFunction), reconciler: idOf(orders.reconcilerFunction) },
}));
app.synth();
`,
};

/**
 * Module specifiers of tsc's output: `import … from 'x'`, `export … from 'x'`, `import 'x'`
 * (each at a line's start, as tsc writes them) and `import('x')`.
 */
const IMPORT_SPECIFIER = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s*)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;

/**
 * The name property of each resource type named in the account and region. An HTTP API's
 * name need not be unique to deploy, but two receivers' APIs under one name cannot be told
 * apart in the console.
 */
const PHYSICAL_NAME: Readonly<Record<string, string>> = {
  'AWS::ApiGatewayV2::Api': 'Name',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::CloudWatch::CompositeAlarm': 'AlarmName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
  'AWS::DynamoDB::GlobalTable': 'TableName',
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::Scheduler::Schedule': 'Name',
  'AWS::Scheduler::ScheduleGroup': 'Name',
  'AWS::SecretsManager::Secret': 'Name',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::SQS::Queue': 'QueueName',
};

interface PackedFile {
  readonly path: string;
}
interface PackResult {
  readonly filename: string;
  readonly size: number;
  readonly entryCount: number;
  readonly files: readonly PackedFile[];
}
interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}
interface CfnTemplate {
  readonly Resources: Record<string, Resource>;
}
type FunctionIds = Record<'Payments' | 'Orders', { executor: string; reconciler: string }>;

/** PATH without this repository's node_modules/.bin: the consumer has only its own tools. */
function pathOutsideRepo(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => !dir.startsWith(REPO_ROOT))
    .join(delimiter);
}

/** The text of every file under `dir` whose name ends with `suffix`. */
async function filesUnder(dir: string, suffix: string): Promise<Map<string, string>> {
  const names = (await readdir(dir, { recursive: true })).filter((name) => name.endsWith(suffix));
  return new Map(await Promise.all(names.map(async (name) => [name, await readFile(join(dir, name), 'utf8')] as const)));
}

/** `@scope/name/sub/path.js` -> `@scope/name`; `name/sub` -> `name`. */
function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

describe('the npm package, installed in a plain-JavaScript CDK app', () => {
  let work: string;
  let appDir: string;
  let outdir: string;
  let pack: PackResult;
  let packSummary = 'not packed';
  let packedManifest: { dependencies?: Record<string, string>; peerDependencies?: Record<string, string>; private?: boolean };
  let template: CfnTemplate;
  let ids: FunctionIds;
  const seconds: Record<string, number> = {};

  const timed = async <T>(phase: string, step: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await step();
    } finally {
      seconds[phase] = Math.round((performance.now() - started) / 100) / 10;
    }
  };

  beforeAll(async () => {
    // Prepare: everything lives in one temporary folder outside the repository, removed after.
    work = await mkdtemp(join(tmpdir(), 'retryproof-pack-'));
    appDir = join(work, 'app');
    outdir = join(appDir, 'cdk.out');
    await mkdir(join(work, 'tmp'), { recursive: true });

    // Act: npm pack runs prepack, which builds dist/.
    const packed = await timed('pack', () =>
      run('npm', ['pack', '--json', '--pack-destination', work], { cwd: REPO_ROOT, timeout: SUITE_TIMEOUT_MS}),
    );
    // Lifecycle scripts print ahead of the JSON on the same stdout.
    const json = packed.stdout.slice(packed.stdout.search(/^\[/m));
    [pack] = JSON.parse(json) as [PackResult];
    packSummary = `tarball ${pack.size} bytes, ${pack.entryCount} files`;

    const repoManifest = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const registryDeps = Object.fromEntries(
      ['aws-cdk-lib', 'constructs', 'esbuild'].map((name) => [name, repoManifest.devDependencies[name] ?? `missing from devDependencies: ${name}`]),
    );
    const repoLock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as PackageLock;
    const { lock } = consumerLock(repoLock, { name: 'retryproof', spec: `file:../${pack.filename}` }, registryDeps);
    await mkdir(appDir, { recursive: true });
    await writeFile(
      join(appDir, 'package.json'),
      JSON.stringify(
        {
          name: 'consumer',
          private: true,
          type: 'module',
          dependencies: { retryproof: `file:../${pack.filename}`, ...registryDeps },
          allowScripts: { esbuild: true },
        },
        null,
        2,
      ),
    );
    await writeFile(join(appDir, 'package-lock.json'), JSON.stringify(lock, null, 2));
    for (const [file, text] of Object.entries(CONSUMER_FILES)) {
      await mkdir(join(appDir, file, '..'), { recursive: true });
      await writeFile(join(appDir, file), text);
    }
    const env = { ...process.env, PATH: pathOutsideRepo(), TMPDIR: join(work, 'tmp') };
    await timed('install', () =>
      run('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: appDir, env, timeout: SUITE_TIMEOUT_MS}),
    );
    packedManifest = JSON.parse(await readFile(join(appDir, 'node_modules', 'retryproof', 'package.json'), 'utf8')) as typeof packedManifest;

    // Act: the app, run by Node 24 (vitest's own node) as `cdk synth` would run it.
    const idsFile = join(work, 'ids.json');
    await timed('synth', () =>
      run(process.execPath, ['app.js', outdir, idsFile], { cwd: appDir, env, timeout: SUITE_TIMEOUT_MS}),
    );
    template = JSON.parse(await readFile(join(outdir, 'Consumer.template.json'), 'utf8')) as CfnTemplate;
    ids = JSON.parse(await readFile(idsFile, 'utf8')) as FunctionIds;
  }, SUITE_TIMEOUT_MS);

  afterAll(async () => {
    console.log(`npm-pack test: ${JSON.stringify(seconds)} seconds; ${packSummary}`);
    await rm(work, { recursive: true, force: true });
  });

  it('packs compiled JavaScript and declarations only: no TypeScript source, no tests, local stack or benchmarks', () => {
    const paths = pack.files.map((f) => f.path);
    expect(paths).toContain('dist/lib/index.js');
    expect(paths).toContain('dist/lib/index.d.ts');
    expect(paths).toContain('dist/lambdas/actions/index.js');
    expect(paths).toContain('dist/lambdas/actions/index.d.ts');
    // npm packs whatever package.json's bin names, whatever `files` says: a TypeScript bin
    // would become a command in the user's node_modules/.bin that Node refuses to run. The
    // bin is a JavaScript launcher that, installed, says the CLI runs from a checkout.
    expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
    expect(paths.filter((p) => /^(dist\/)?(test|local|bench|cli|scripts|bin)\//.test(p) && p !== 'cli/retryproof.mjs')).toEqual([]);
    expect(paths.filter((p) => !/^(dist\/(lib|lambdas)\/|cli\/retryproof\.mjs$|package\.json$|README\.md$|LICENSE$)/.test(p))).toEqual([]);
    expect(packedManifest.private).toBeUndefined();
  });

  it('installs a retryproof command that says the operator CLI runs from a checkout, and exits 2', async () => {
    const out = await execFileAsync(process.execPath, [join(appDir, 'node_modules', 'retryproof', 'cli', 'retryproof.mjs'), '--help'], { encoding: 'utf8' }).then(
      () => ({ code: 0, stderr: '' }),
      (err: unknown) => ({ code: (err as { code?: number }).code, stderr: (err as { stderr?: string }).stderr ?? '' }),
    );
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('the operator CLI runs from a checkout of the retryproof repository');
  });

  it('declares every package its JavaScript imports, with aws-cdk-lib and constructs as peers', async () => {
    const declared = new Set([...Object.keys(packedManifest.dependencies ?? {}), ...Object.keys(packedManifest.peerDependencies ?? {})]);
    const code = await filesUnder(join(appDir, 'node_modules', 'retryproof', 'dist'), '.js');
    const undeclared = new Set<string>();
    for (const [file, text] of code) {
      for (const [, staticImport, dynamicImport] of text.matchAll(IMPORT_SPECIFIER)) {
        const specifier = staticImport ?? dynamicImport;
        if (specifier === undefined || specifier.startsWith('.') || isBuiltin(specifier)) continue;
        if (!declared.has(packageNameOf(specifier))) undeclared.add(`${file} imports ${specifier}`);
      }
    }
    expect([...undeclared]).toEqual([]);
    expect(Object.keys(packedManifest.peerDependencies ?? {}).sort()).toEqual(['aws-cdk-lib', 'constructs']);
    expect(Object.keys(packedManifest.dependencies ?? {})).not.toContain('aws-cdk-lib');
  });

  it('synthesizes two receivers in one stack: two HTTP APIs, their functions, and a queue and DLQ each', () => {
    const ofType = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type);
    expect(ofType('AWS::ApiGatewayV2::Api')).toHaveLength(2);
    expect(ofType('AWS::Lambda::Function').length).toBeGreaterThanOrEqual(6);
    const queues = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::SQS::Queue');
    const workQueues = queues.filter(([, r]) => r.Properties?.RedrivePolicy !== undefined);
    const deadLetterIds = workQueues.map(([, r]) => JSON.stringify((r.Properties?.RedrivePolicy as { deadLetterTargetArn: unknown }).deadLetterTargetArn));
    expect(workQueues).toHaveLength(2);
    expect(new Set(deadLetterIds).size).toBe(2);
    expect(queues).toHaveLength(4);
  });

  it('gives no two resources of the stack the same physical name', () => {
    const seen = new Map<string, string[]>();
    for (const [logicalId, resource] of Object.entries(template.Resources)) {
      const property = PHYSICAL_NAME[resource.Type];
      const name = property === undefined ? undefined : resource.Properties?.[property];
      if (name === undefined) continue;
      // A schedule's name is unique within its group only.
      const group = resource.Type === 'AWS::Scheduler::Schedule' ? JSON.stringify(resource.Properties?.GroupName ?? 'default') : '';
      const key = `${resource.Type} ${group} ${JSON.stringify(name)}`;
      seen.set(key, [...(seen.get(key) ?? []), logicalId]);
    }
    const shared = [...seen].filter(([, holders]) => holders.length > 1).map(([key, holders]) => `${key}: ${holders.join(', ')}`);
    expect(shared).toEqual([]);
    expect(seen.size).toBeGreaterThan(0);
  });

  it("bundles each receiver's own action into its executor, and its ledger into its reconciler, not the other's", async () => {
    const bundleOf = async (logicalId: string) => {
      const code = template.Resources[logicalId]?.Properties?.Code as { S3Key: string } | undefined;
      if (code === undefined) throw new Error(`no function ${logicalId} in the template`);
      return readFile(join(outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs'), 'utf8');
    };
    const payments = await bundleOf(ids.Payments.executor);
    const orders = await bundleOf(ids.Orders.executor);
    expect(payments).toContain(MARKER.charge);
    expect(payments).not.toContain(MARKER.ship);
    expect(orders).toContain(MARKER.ship);
    expect(orders).not.toContain(MARKER.charge);
    expect(await bundleOf(ids.Orders.reconciler)).toContain(MARKER.shipLedger);
    expect(await bundleOf(ids.Payments.reconciler)).not.toContain(MARKER.shipLedger);
  });
});
