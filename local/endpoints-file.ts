/**
 * `${RETRYPROOF_LOCAL_DIR}/endpoints.json`: where a running local stack tells the CLI,
 * `npm run send` and the storm how to reach it. Written once the stack is ready, removed
 * when it stops; a file left by a killed stack is recognised by its dead pid.
 *
 * `regions` lists every Region the stack runs (local-regions.ts), each with its gateway and its
 * queues; the top-level `httpUrl` and queue fields are the first Region's, as a single-Region
 * stack wrote them before `regions` existed, so readers that know nothing of Regions still work.
 * Each Region's bucket of large bodies (`bodyBucket`) is on fauxqs's S3, at `s3Endpoint` (its SQS
 * endpoint); both are absent from the file of a stack older than the S3 claim check.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ResolvedConfig } from '../lambdas/config/resolve-config.ts';
import type { SignatureConfig } from '../lambdas/config/route-config.ts';
import { LOCAL_REGION } from './local-credentials.ts';
import { DEFAULT_LOCAL_REGION } from './local-regions.ts';
import type { QueuePair, RouteQueue } from './local-services.ts';
import { DEFAULT_LOCAL_DIR, LOCAL_ENV, SettingsError } from './local-settings.ts';
import type { LocalSettings } from './local-settings.ts';
import type { LocalEndpointUrls } from './sdk-environment.ts';

export const ENDPOINTS_FILE = 'endpoints.json';

export interface LocalRouteEndpoint {
  readonly name: string;
  readonly signature: SignatureConfig;
  /** Local-only secret; the file is written with mode 0600. */
  readonly secret: string;
  readonly leaseSeconds: number;
  /** The action the route runs. */
  readonly action: string;
}

/** One Region of the stack: what it holds of its own. The table is every Region's. */
export interface LocalRegionEndpoint {
  readonly name: string;
  /** Its gateway: `${httpUrl}/webhooks/{route}`. */
  readonly httpUrl: string;
  /** Where its own `/_local/` calls are served (its executor, its queues, a reconcile that re-enqueues onto its queue). */
  readonly adminUrl: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly queueArn: string;
  readonly dlqArn: string;
  /**
   * The queue of each of its routes with one of its own (ownQueue), by route; each dead-letters
   * to `dlqUrl`. Absent (none) from the file of a stack older than route queues.
   */
  readonly routeQueueUrls?: Readonly<Record<string, string>>;
  /** Its bucket of large bodies (the S3 claim check). Absent from the file of an older stack. */
  readonly bodyBucket?: string;
}

export interface LocalEndpoints {
  readonly version: 1;
  readonly pid: number;
  readonly startedAt: string;
  /** The configuration file the stack runs. Absolute. */
  readonly configFile: string;
  /** The first Region's gateway. */
  readonly httpUrl: string;
  /** The SDK's region for clients of the local services (not a local Region's name). */
  readonly region: string;
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
  /** fauxqs's S3 (path-style addressing): its SQS endpoint. Absent from the file of an older stack. */
  readonly s3Endpoint?: string;
  readonly eventsTable: string;
  /** The demo's ledger table; absent while the demo is off. */
  readonly ledgerTable?: string;
  /** The first Region's queues. */
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly queueArn: string;
  readonly dlqArn: string;
  /** The first Region's routes' own queues, by route, as a deployed receiver's descriptor has them. */
  readonly routeQueueUrls?: Readonly<Record<string, string>>;
  /** The first Region's bucket of large bodies, as a deployed receiver's descriptor has it. */
  readonly bodyBucket?: string;
  /** Every Region, the first one first. Absent from the file of a stack older than Regions: see {@link localRegionsIn}. */
  readonly regions?: readonly LocalRegionEndpoint[];
  readonly routes: readonly LocalRouteEndpoint[];
  /**
   * The configuration the stack runs, resolved, with the environment's overrides applied
   * (RETRYPROOF_SETTLE_S and the others): the one the CLI reads routes, windows and margins
   * from, never the configuration file. Absent from the file of an older stack.
   */
  readonly config?: ResolvedConfig;
  readonly settings: {
    readonly visibilityTimeoutSeconds: number;
    readonly maxReceiveCount: number;
    readonly reconcileEverySeconds: number;
    readonly stuckAfterSeconds: number;
    readonly settleSeconds: number;
  };
}

/** A Region as the stack runs it: its name, its gateway's URL and its queues. */
export interface RunningRegion {
  readonly name: string;
  readonly httpUrl: string;
  readonly queues: QueuePair;
  /** Its routes' own queues, by route. @default - none */
  readonly routeQueues?: ReadonlyMap<string, RouteQueue>;
  /** Its bucket of large bodies. @default - none */
  readonly bodyBucket?: string;
}

/**
 * What a stack that runs `settings` on these services writes, its pid and start time now.
 * @param at.regions every Region, the first one first (at least one)
 */
export function localEndpointsOf(
  settings: LocalSettings,
  at: { readonly regions: readonly RunningRegion[]; readonly services: LocalEndpointUrls & { readonly s3Endpoint?: string } },
  tables: { readonly eventsTable: string; readonly ledgerTable?: string | undefined },
): LocalEndpoints {
  const { config } = settings;
  const [first] = at.regions;
  if (first === undefined) throw new Error('localEndpointsOf: a stack runs at least one region');
  return {
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    configFile: settings.configFile,
    httpUrl: first.httpUrl,
    region: LOCAL_REGION,
    dynamoEndpoint: at.services.dynamoEndpoint,
    sqsEndpoint: at.services.sqsEndpoint,
    ...(at.services.s3Endpoint === undefined ? {} : { s3Endpoint: at.services.s3Endpoint }),
    eventsTable: tables.eventsTable,
    ...(tables.ledgerTable === undefined ? {} : { ledgerTable: tables.ledgerTable }),
    ...first.queues,
    routeQueueUrls: routeQueueUrlsOf(first),
    ...bodyBucketOf(first),
    regions: at.regions.map((r) => ({
      name: r.name,
      httpUrl: r.httpUrl,
      adminUrl: r.httpUrl,
      ...r.queues,
      routeQueueUrls: routeQueueUrlsOf(r),
      ...bodyBucketOf(r),
    })),
    routes: config.routes.map((r) => ({
      name: r.name,
      signature: r.signature,
      // What a sender signs with: the send tool and the storm read it.
      secret: settings.secrets.find((s) => s.route === r.name)?.signingSecret ?? '',
      leaseSeconds: r.leaseSeconds,
      action: r.action,
    })),
    config,
    settings: {
      visibilityTimeoutSeconds: config.queue.visibilityTimeoutSeconds,
      maxReceiveCount: config.queue.maxReceiveCount,
      reconcileEverySeconds: settings.reconcileEverySeconds,
      stuckAfterSeconds: config.reconciliation.stuckAfterSeconds,
      settleSeconds: config.reconciliation.settleSeconds,
    },
  };
}

function bodyBucketOf(region: RunningRegion): { bodyBucket?: string } {
  return region.bodyBucket === undefined ? {} : { bodyBucket: region.bodyBucket };
}

function routeQueueUrlsOf(region: RunningRegion): Record<string, string> {
  return Object.fromEntries([...(region.routeQueues ?? new Map<string, RouteQueue>())].map(([route, q]) => [route, q.queueUrl]));
}

/** A Region the local stack does not run was asked for. Its message lists the Regions it runs. */
export class UnknownRegionError extends Error {
  readonly region: string;
  readonly regions: readonly string[];
  constructor(region: string, regions: readonly string[]) {
    super(`the local stack has no region ${JSON.stringify(region)}; its regions: ${regions.join(', ')}`);
    this.name = 'UnknownRegionError';
    this.region = region;
    this.regions = regions;
  }
}

/** Every Region of the stack, the first one first; the single Region of a file written before `regions` existed. */
export function localRegionsIn(endpoints: LocalEndpoints): readonly LocalRegionEndpoint[] {
  if (endpoints.regions !== undefined && endpoints.regions.length > 0) return endpoints.regions;
  const { httpUrl, queueUrl, dlqUrl, queueArn, dlqArn, routeQueueUrls, bodyBucket } = endpoints;
  return [
    {
      name: DEFAULT_LOCAL_REGION,
      httpUrl,
      adminUrl: httpUrl,
      queueUrl,
      dlqUrl,
      queueArn,
      dlqArn,
      ...(routeQueueUrls === undefined ? {} : { routeQueueUrls }),
      ...(bodyBucket === undefined ? {} : { bodyBucket }),
    },
  ];
}

/**
 * The Region named `name`, or the first one when no name is given.
 * @throws UnknownRegionError listing the Regions the stack runs
 */
export function localRegionIn(endpoints: LocalEndpoints, name?: string): LocalRegionEndpoint {
  const regions = localRegionsIn(endpoints);
  const found = name === undefined ? regions[0] : regions.find((r) => r.name === name);
  if (found === undefined) throw new UnknownRegionError(name ?? '', regions.map((r) => r.name));
  return found;
}

/** The local stack is not running (no file, or the process that wrote it is gone). */
export class StackNotRunningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StackNotRunningError';
  }
}

/** The folder of the local stack: RETRYPROOF_LOCAL_DIR, or `.local/` in the working directory. */
export function localDir(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const raw = env[LOCAL_ENV.dir]?.trim();
  return resolve(cwd, raw === undefined || raw === '' ? DEFAULT_LOCAL_DIR : raw);
}

export function endpointsPath(dir: string): string {
  return join(dir, ENDPOINTS_FILE);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but someone else's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Refuses to start a second stack on a folder: both would write the same data files.
 * @throws SettingsError naming the folder and the running stack's pid
 */
export async function refuseSecondStack(dir: string): Promise<void> {
  const previous = await readEndpointsFile(dir).catch(() => undefined);
  if (previous !== undefined && previous.pid !== process.pid && isAlive(previous.pid)) {
    throw new SettingsError(`a local stack already runs in ${dir} (pid ${previous.pid}): stop it, or set RETRYPROOF_LOCAL_DIR to another folder`);
  }
}

/** Writes the file atomically (temp file, then rename), readable by the owner only. */
export async function writeEndpoints(dir: string, endpoints: LocalEndpoints): Promise<void> {
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${ENDPOINTS_FILE}.${process.pid}.tmp`);
  await writeFile(temp, `${JSON.stringify(endpoints, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, endpointsPath(dir));
}

/** Removes the file if this process wrote it. */
export async function removeEndpoints(dir: string, pid: number = process.pid): Promise<void> {
  const current = await readEndpointsFile(dir);
  if (current !== undefined && current.pid !== pid) return;
  await rm(endpointsPath(dir), { force: true });
}

/** The file's content, or undefined when there is none. Does not check that the stack runs. */
export async function readEndpointsFile(dir: string): Promise<LocalEndpoints | undefined> {
  let text: string;
  try {
    text = await readFile(endpointsPath(dir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new StackNotRunningError(`${endpointsPath(dir)} is not valid JSON; remove it and start the stack again (npm start)`);
  }
  const e = parsed as Partial<LocalEndpoints>;
  if (e.version !== 1 || typeof e.pid !== 'number' || typeof e.httpUrl !== 'string' || typeof e.eventsTable !== 'string') {
    throw new StackNotRunningError(`${endpointsPath(dir)} is not an endpoints file of this version; remove it and run npm start`);
  }
  return e as LocalEndpoints;
}

/**
 * The endpoints of the stack running in `dir`.
 * @throws StackNotRunningError saying how to start it
 */
export async function readRunningEndpoints(dir: string): Promise<LocalEndpoints> {
  const endpoints = await readEndpointsFile(dir);
  if (endpoints === undefined) {
    throw new StackNotRunningError(`no local stack is running in ${dir} (no ${ENDPOINTS_FILE}); start one with: npm start`);
  }
  if (!isAlive(endpoints.pid)) {
    throw new StackNotRunningError(
      `the local stack in ${dir} is not running (pid ${endpoints.pid} is gone); start it with: npm start`,
    );
  }
  return endpoints;
}
