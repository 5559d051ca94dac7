/**
 * The local stack's settings: a route configuration (retryproof.config.ts, the CDK app's,
 * unless `npm start -- --config <path>` names another) plus a few environment overrides
 * that make a laptop run fast. Every value is checked here, once, so a bad one stops the
 * start with one line and exit code 2.
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertActionsSupplied, ConfigError, DEMO_ACTION, resolveConfig } from '../lambdas/config/resolve-config.ts';
import type { ResolvedConfig, ResolvedRoute } from '../lambdas/config/resolve-config.ts';
import type { ActionSource, RetryproofConfig, RouteConfig } from '../lambdas/config/route-config.ts';
import { DEMO_ACTION_SOURCE } from '../lambdas/demo/demo-environment.ts';
import { standardWebhooksPublicKeyOf } from '../lambdas/domain/signatures/standard-webhooks-keys.ts';
import { signDelivery } from '../lambdas/domain/signatures/sign-delivery.ts';
import { localRegionNames, localRegionsOf } from './local-regions.ts';
import type { LocalRegion } from './local-regions.ts';
import { SettingsError } from './settings-error.ts';

export { SettingsError };

/** The environment variables the local stack reads. */
export const LOCAL_ENV = {
  port: 'PORT',
  dir: 'RETRYPROOF_LOCAL_DIR',
  demoSecret: 'RETRYPROOF_DEMO_SECRET',
  visibilityTimeout: 'RETRYPROOF_VISIBILITY_TIMEOUT_S',
  maxReceiveCount: 'RETRYPROOF_MAX_RECEIVE_COUNT',
  reconcileEvery: 'RETRYPROOF_RECONCILE_EVERY_S',
  stuckAfter: 'RETRYPROOF_STUCK_AFTER_S',
  settle: 'RETRYPROOF_SETTLE_S',
  actionTime: 'RETRYPROOF_ACTION_TIME_S',
  maxAttempts: 'RETRYPROOF_MAX_ATTEMPTS',
} as const;

/** The configuration file `npm start` runs without `--config`, relative to the working directory. */
export const DEFAULT_CONFIG_FILE = 'retryproof.config.ts';

/** The folder the stack keeps its data and endpoints.json in, relative to the working directory. */
export const DEFAULT_LOCAL_DIR = '.local';
export const DEFAULT_PORT = 3000;
/**
 * Locally the visibility timeout is short, so a retryable failure comes back in seconds.
 * The deployed queue derives its timeout from the lease (6x the executor's timeout); here
 * that rule is waived: an action slower than this sees its message come back while it
 * runs, and the executor hands it back as locked.
 */
export const DEFAULT_LOCAL_VISIBILITY_SECONDS = 5;

/** The route that the demo secret, `npm run send` and the storm use. */
export const DEMO_ROUTE = 'demo';

/** Local-only signing secrets: fixed, so a restarted stack accepts what the last one signed. */
export const LOCAL_DEMO_SECRET = `whsec_${Buffer.from('retryproof-local-demo-secret-32b').toString('base64')}`;

export interface LocalRouteSecret {
  readonly route: string;
  readonly secretName: string;
  /** What the receiver holds (for a v1a route, the `whpk_` public key). */
  readonly secret: string;
  /** What a sender signs with: the secret itself, or the `whsk_` private key of a v1a route. */
  readonly signingSecret: string;
}

/**
 * The demo's own route: Standard Webhooks signatures and the demo payout action on the demo
 * ledger, with a circuit breaker that pauses at the fourth copy of a key. The walk-through,
 * `npm run send` and the storm use it.
 */
export const LOCAL_DEMO_ROUTE: RouteConfig = {
  name: DEMO_ROUTE,
  signature: { scheme: 'standard-webhooks' },
  secretName: 'retryproof/demo',
  action: 'payout',
  actionTimeSeconds: 15,
  keepHeaders: ['content-type'],
  breakerThreshold: 3,
  breakerReaction: 'pause',
};

/**
 * The demo's routes: `demo`, then one route per signature scheme, so every scheme can be tried
 * locally with `npm run send -- --route demo-github`. Local only, and only while the demo is on
 * (locally the default: see {@link localDemoOf}): a deployment has the routes of its
 * configuration and nothing more. Each runs the demo payout action.
 */
export const LOCAL_SCHEME_DEMO_ROUTES: readonly RouteConfig[] = [
  LOCAL_DEMO_ROUTE,
  ...(
    [
      ['demo-stripe', { scheme: 'stripe' }],
      ['demo-github', { scheme: 'github' }],
      ['demo-shopify', { scheme: 'shopify' }],
      ['demo-slack', { scheme: 'slack' }],
      ['demo-hmac', { scheme: 'hmac-sha256', header: 'x-signature', prefix: 'sha256=', encoding: 'hex' }],
      ['demo-v1a', { scheme: 'standard-webhooks' }],
    ] as const
  ).map(([name, signature]) => ({
    name,
    signature,
    secretName: `retryproof/${name}`,
    action: 'payout',
    actionTimeSeconds: 15,
    keepHeaders: ['content-type'],
  })),
];

/**
 * True in a checkout of the retryproof repository, false in an app that installed the package
 * (its code then lives under node_modules, as cli/retryproof.mjs tells them apart too).
 */
export const IN_RETRYPROOF_REPOSITORY = !fileURLToPath(import.meta.url).split(/[\\/]/).includes('node_modules');

/**
 * Whether the local stack runs the demo: what the configuration's `demo` says, else only in this
 * repository. The shipped retryproof.config.ts deploys no demo (it is safe to deploy as it is),
 * yet `npm start` on it is the walk-through, which is the demo's; an app's stack serves its own
 * routes only.
 * @param inRepository @default - whether this code runs from the repository's checkout
 */
export function localDemoOf(base: RetryproofConfig, inRepository: boolean = IN_RETRYPROOF_REPOSITORY): boolean {
  return base.demo ?? inRepository;
}

/** The local route whose Standard Webhooks sender signs with ed25519 (v1a) instead of HMAC (v1). */
export const LOCAL_V1A_ROUTE = 'demo-v1a';

/** The local v1a signing key: a fixed RFC 8032 seed, so a restarted stack accepts what the last one signed. */
export const LOCAL_V1A_SIGNING_KEY = `whsk_${Buffer.from('retryproof-local-v1a-ed25519-32b').toString('base64')}`;

export interface LocalSettings {
  /** The first Region's port; the other Regions' follow it. */
  readonly port: number;
  /**
   * The Regions the stack runs, the first on `port` (local-regions.ts): from `--regions`, else
   * the configuration's `regions.replicas`, else one, `local-1`.
   */
  readonly regions: readonly LocalRegion[];
  /** Absolute. */
  readonly dir: string;
  /** The configuration file the stack runs. Absolute. */
  readonly configFile: string;
  readonly config: ResolvedConfig;
  /**
   * The modules of every action the executor gets, by name: the configuration's `actions`,
   * plus the demo's `payout` while the demo is on. Paths are absolute.
   */
  readonly actions: Readonly<Record<string, ActionSource>>;
  readonly secrets: readonly LocalRouteSecret[];
  /** 0: no reconcile timer. */
  readonly reconcileEverySeconds: number;
  /** True when the demo secret came from RETRYPROOF_DEMO_SECRET (then it is not printed in full). */
  readonly demoSecretFromEnv: boolean;
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const text = raw.trim();
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new SettingsError(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return Number(text);
}

/** A fixed local secret for a route that is not the demo, in the form its scheme expects (what the receiver holds). */
export function localSecretFor(route: ResolvedRoute): string {
  switch (route.signature.scheme) {
    case 'standard-webhooks':
      if (route.name === LOCAL_V1A_ROUTE) return standardWebhooksPublicKeyOf(LOCAL_V1A_SIGNING_KEY);
      return route.name === DEMO_ROUTE
        ? LOCAL_DEMO_SECRET
        : `whsec_${Buffer.from(`retryproof-local-${route.name}`).toString('base64')}`;
    case 'stripe':
      return `whsec_local_${route.name.replace(/[^a-z0-9]/g, '')}`;
    default:
      return `local-${route.name}-secret`;
  }
}

function checkSecret(route: ResolvedRoute, secret: string): void {
  try {
    signDelivery(route.signature, secret, Buffer.from('{}'), { nowSeconds: 0, id: 'check' });
  } catch (err) {
    throw new SettingsError(`${LOCAL_ENV.demoSecret} is not a usable ${route.signature.scheme} secret: ${(err as Error).message}`);
  }
}

/** The modules of every action: the configuration's own, paths made absolute against `cwd`, and the demo's while it is on. */
function actionSourcesOf(base: RetryproofConfig, demo: boolean, cwd: string): Record<string, ActionSource> {
  const own = Object.entries(base.actions ?? {}).map(([name, source]): [string, ActionSource] => [
    name,
    { entry: resolve(cwd, source.entry), ...(source.ledger === undefined ? {} : { ledger: resolve(cwd, source.ledger) }) },
  ]);
  return Object.fromEntries([...own, ...(demo ? [[DEMO_ACTION, DEMO_ACTION_SOURCE] as const] : [])]);
}

/** What `npm start` takes on its command line beside `--config`, and where it runs. */
export interface LocalFlags {
  /** `--regions`: a count or a list of names. @default - the configuration's replicas, else one Region */
  readonly regions?: string | undefined;
  /** Whether the stack runs in this repository (the demo's default). @default - {@link IN_RETRYPROOF_REPOSITORY} */
  readonly inRepository?: boolean | undefined;
}

/**
 * Reads and validates the local settings.
 * @param base the route configuration, as the configuration file exports it
 * @param configFile that file, absolute or relative to `cwd`: messages name it as given
 * @throws SettingsError with a one-line message
 */
export function readLocalSettings(
  env: NodeJS.ProcessEnv,
  base: RetryproofConfig,
  cwd: string = process.cwd(),
  configFile: string = DEFAULT_CONFIG_FILE,
  flags: LocalFlags = {},
): LocalSettings {
  const port = wholeNumber(env, LOCAL_ENV.port, 1, 65_535) ?? DEFAULT_PORT;
  // The flag is checked before the file: its mistake is the one just typed.
  const regionNames = flags.regions === undefined ? undefined : localRegionNames(flags.regions);
  const rawDir = env[LOCAL_ENV.dir];
  const dirText = rawDir === undefined || rawDir.trim() === '' ? DEFAULT_LOCAL_DIR : rawDir.trim();
  const dir = isAbsolute(dirText) ? dirText : resolve(cwd, dirText);
  const visibility = wholeNumber(env, LOCAL_ENV.visibilityTimeout, 1, 43_200) ?? DEFAULT_LOCAL_VISIBILITY_SECONDS;
  const maxReceiveCount = wholeNumber(env, LOCAL_ENV.maxReceiveCount, 1, 1000);
  const reconcileEvery = wholeNumber(env, LOCAL_ENV.reconcileEvery, 0, 86_400);
  const stuckAfter = wholeNumber(env, LOCAL_ENV.stuckAfter, 0, 86_400);
  const settle = wholeNumber(env, LOCAL_ENV.settle, 0, 3600);
  const actionTime = wholeNumber(env, LOCAL_ENV.actionTime, 1, 290);
  const maxAttempts = wholeNumber(env, LOCAL_ENV.maxAttempts, 1, 100);

  let resolved: ResolvedConfig;
  let actions: Record<string, ActionSource>;
  try {
    // The file as written first, so its own mistakes are named before the local additions.
    resolveConfig(base);
    const demo = localDemoOf(base, flags.inRepository);
    // Overrides that are part of the configuration go through resolveConfig and its checks.
    const shaped: RetryproofConfig = {
      ...base,
      demo,
      routes: [...base.routes, ...(demo ? LOCAL_SCHEME_DEMO_ROUTES.filter((d) => !base.routes.some((r) => r.name === d.name)) : [])].map((r) => ({
        ...r,
        ...(actionTime === undefined ? {} : { actionTimeSeconds: actionTime }),
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
      })),
      queue: { ...base.queue, ...(maxReceiveCount === undefined ? {} : { maxReceiveCount }) },
    };
    resolved = resolveConfig(shaped);
    actions = actionSourcesOf(base, demo, cwd);
    assertActionsSupplied(resolved, Object.keys(actions));
  } catch (err) {
    if (err instanceof ConfigError) throw new SettingsError(`${configFile}: ${err.message.split('\n').join('; ')}`);
    throw err;
  }
  // Local-only numbers: below what resolveConfig allows for a deployment, on purpose.
  const config: ResolvedConfig = {
    ...resolved,
    queue: { ...resolved.queue, visibilityTimeoutSeconds: visibility, resendAfterSeconds: visibility + 60 },
    reconciliation: {
      ...resolved.reconciliation,
      ...(stuckAfter === undefined ? {} : { stuckAfterSeconds: stuckAfter }),
      ...(settle === undefined ? {} : { settleSeconds: settle }),
    },
  };

  const demoSecret = env[LOCAL_ENV.demoSecret]?.trim();
  const demoSecretFromEnv = demoSecret !== undefined && demoSecret !== '';
  const secrets = config.routes.map((route) => {
    const secret = route.name === DEMO_ROUTE && demoSecretFromEnv ? demoSecret : localSecretFor(route);
    if (route.name === DEMO_ROUTE) checkSecret(route, secret);
    const signingSecret = route.name === LOCAL_V1A_ROUTE ? LOCAL_V1A_SIGNING_KEY : secret;
    return { route: route.name, secretName: route.secretName, secret, signingSecret };
  });
  const regions = localRegionsOf(regionNames ?? localRegionNames(undefined, config.regions?.replicas), port);
  return {
    port,
    regions,
    dir,
    configFile: resolve(cwd, configFile),
    config,
    actions,
    secrets,
    reconcileEverySeconds: reconcileEvery ?? config.reconciliation.everyMinutes * 60,
    demoSecretFromEnv,
  };
}
