/**
 * The local stack: DynamoDB Local and fauxqs with their data on disk, the ingest behind a
 * local API Gateway, the executor behind a local SQS event source, the reconciler on a
 * timer. Each function is built by the composition root the Lambdas use (wireIngest,
 * wireExecutor, createReconciler) over the user's own action modules; only what differs
 * locally is passed in: static secrets, the terminal in place of logs and the alarm topic,
 * fauxqs' message visibility, clients on the local services. `scripts/start.ts` adds the
 * process around it.
 *
 * Several Regions (`npm start -- --regions 2`, local-regions.ts): each Region gets what a
 * deployed Region has of its own, a gateway on its own port, a work queue with its DLQ, an
 * ingest and an executor wired to that queue, and a reconciler that re-enqueues onto it; all
 * of them share the one events table and the demo's ledger, as Regions share one MRSC global
 * table. The reconcile timer runs in the first Region only: one run over the one table covers
 * every Region's records (the other Regions reconcile when asked, through their admin calls).
 *
 * Routes with a queue of their own (`ownQueue`, route-queues.ts): each Region gets one fauxqs
 * queue per such route beside its work queue, dead-lettering into the Region's DLQ, and an event
 * source of its own on it whose concurrency is the route's (`concurrency`); the functions get the
 * URLs as the deployed ones make them from their bundle (Deployment.routeQueueUrls), so every
 * sender puts a route's work on its queue, and a message's visibility changes on the queue it
 * came from.
 *
 * Large bodies (the S3 claim check, docs/large-payloads.md): each Region gets a bucket on fauxqs's
 * S3 (LocalRegion.bodyBucket), as a deployed Region gets its own; its functions get it as the
 * deployed ones get RETRYPROOF_BODY_BUCKET (Deployment.bodyBucket), with an S3 client on fauxqs,
 * so a body above its route's claimCheckAboveBytes is stored there before its claim and read back
 * by the executor; the reconciler's re-sends keep its object alive as deployed.
 */
import { DEMO_LEDGER_TABLE_ENV } from '../lambdas/demo/demo-environment.ts';
import { prepareRoutes } from '../lambdas/ingest/prepared-route.ts';
import { SERVICE } from '../lambdas/observability/metric-catalogue.ts';
import { createReconciler } from '../lambdas/reconciler/create-reconciler.ts';
import type { ReconcileReport } from '../lambdas/reconciler/reconcile.ts';
import { workQueueUrls } from '../lambdas/config/deployment.ts';
import type { Deployment } from '../lambdas/config/deployment.ts';
import { wireExecutor } from '../lambdas/executor/wire-executor.ts';
import { wireIngest } from '../lambdas/ingest/wire-ingest.ts';
import { importActions } from './action-imports.ts';
import { shownPath } from './config-file.ts';
import type { ImportedActions } from './action-imports.ts';
import { adminEndpoints } from './admin-endpoints.ts';
import { IngestTally, TallyMetrics } from './ingest-tally.ts';
import { localEndpointsOf, refuseSecondStack, removeEndpoints, writeEndpoints } from './endpoints-file.ts';
import type { LocalEndpoints } from './endpoints-file.ts';
import { pollerGroup, restartablePoller, startPoller } from './executor-poller.ts';
import type { RunningWork } from './executor-poller.ts';
import { lambdaContext } from './http-api-event.ts';
import { LOCAL_REGION } from './local-credentials.ts';
import { localMessageVisibility } from './local-message-visibility.ts';
import { startLocalServices } from './local-services.ts';
import type { RunningServices } from './local-services.ts';
import { runLocalSetup } from './local-setup.ts';
import type { LocalSetup } from './local-setup.ts';
import type { LocalSettings } from './local-settings.ts';
import { noteLastRun, startReconcileRuns } from './reconcile-runs.ts';
import type { ReconcileRequest } from './reconcile-runs.ts';
import { useLocalSdk } from './sdk-environment.ts';
import { openStackGateway } from './stack-gateway.ts';
import { StaticSecretSource } from './static-secret-source.ts';
import { deliveryLines, executorLogger, regionTerminal } from './terminal-output.ts';
import type { LocalRegion } from './local-regions.ts';
import type { StackGateway } from './stack-gateway.ts';
import type { QueuePair, RouteQueue } from './local-services.ts';
import { localRouteConcurrency, regionQueueNames } from './route-queues.ts';
import type { ReconcileRuns } from './reconcile-runs.ts';
import type { RestartablePoller } from './executor-poller.ts';

/** The local stack's answer margin (IngestDeps.answerMarginMs): one process, one clock. */
export const LOCAL_ANSWER_MARGIN_MS = 0;
import type { Terminal } from './terminal-output.ts';

export { PortInUseError } from './stack-gateway.ts';
export type { ReconcileRequest } from './reconcile-runs.ts';

export const LOCAL_TABLES = { eventsTable: 'retryproof-events', ledgerTable: 'retryproof-ledger' } as const;
/** The first Region's work queue (every Region's queue: LocalRegion.queue). */
export const LOCAL_QUEUE = 'retryproof-work';
/** Batches the local event source runs at once, at most: a laptop, not a fleet. */
const MAX_LOCAL_CONCURRENCY = 3;

/** One Region of a running stack. */
export interface LocalStackRegion {
  readonly name: string;
  /** Its gateway. */
  readonly url: string;
  /** Kills this Region's executor event source with its batches in flight and starts a new one. */
  restartExecutor(): Promise<{ abandonedBatches: number }>;
  /** One reconciliation now, re-enqueueing onto this Region's queue; this Region's runs never overlap. */
  reconcileOnce(request?: ReconcileRequest): Promise<ReconcileReport>;
}

export interface LocalStack {
  /** The first Region's gateway. */
  readonly url: string;
  readonly endpoints: LocalEndpoints;
  /** Every Region, the first one first. */
  readonly regions: readonly LocalStackRegion[];
  /** Kills every Region's executor event source with its batches in flight and starts new ones. */
  restartExecutor(): Promise<{ abandonedBatches: number }>;
  /** One reconciliation now, in the first Region; its runs never overlap. */
  reconcileOnce(request?: ReconcileRequest): Promise<ReconcileReport>;
  /** Stops everything; resolves when every part has stopped. Safe to call twice. */
  stop(): Promise<void>;
  /** What a stop waits for: the messages the executors run now, and how long they may take. */
  running(): RunningWork;
  /**
   * Stops without waiting for the running batches: they delete nothing, so each record's
   * lease runs out and its message comes back from SQS on the next start. Nothing is lost.
   * Resolves when every other part has stopped.
   */
  abandon(): Promise<void>;
}

export interface LocalStackOptions {
  readonly settings: LocalSettings;
  /** The configuration file's `localSetup`. @default - none: the user's modules need nothing local */
  readonly localSetup?: LocalSetup | undefined;
  /** One line of normal output, without its newline. */
  readonly out: (line: string) => void;
  /** One line about a problem. */
  readonly err: (line: string) => void;
  /**
   * Called once the quick refusals have passed (another stack in the folder, a port in use),
   * before the services start: where the banner goes, so a refusal is one line alone.
   * @default - nothing
   */
  readonly onPortsTaken?: () => void;
}

/**
 * The user's code, loaded as a Lambda's cold start loads it: its environment first (the
 * SDK pointed at the local services, the demo's table, what `localSetup` returns), then its
 * modules, which may read that environment as they load. This process is the stack's own,
 * so its environment is theirs. Every Region runs the same modules, loaded once.
 */
async function loadActions(settings: LocalSettings, services: RunningServices, localSetup: LocalSetup | undefined): Promise<ImportedActions> {
  useLocalSdk(services);
  if (settings.config.demo) process.env[DEMO_LEDGER_TABLE_ENV] = LOCAL_TABLES.ledgerTable;
  if (localSetup !== undefined) {
    const local = { ...services.clients, dynamoEndpoint: services.dynamoEndpoint, sqsEndpoint: services.sqsEndpoint, region: LOCAL_REGION };
    Object.assign(process.env, await runLocalSetup(localSetup, local, shownPath(settings.configFile)));
  }
  return importActions(settings.actions);
}

/** A Region's gateway, open before anything else starts, with the lines it prints. */
interface OpenRegion {
  readonly region: LocalRegion;
  readonly terminal: Terminal;
  readonly lines: ReturnType<typeof deliveryLines>;
  readonly gateway: StackGateway;
}

/**
 * Takes every Region's port, the first Region's first; a busy one closes those already open.
 * @throws PortInUseError
 */
async function openGateways(settings: LocalSettings, routes: ReturnType<typeof prepareRoutes>, terminal: Terminal): Promise<OpenRegion[]> {
  const opened: OpenRegion[] = [];
  // One Region prints as it always has; several name theirs on every line.
  const several = settings.regions.length > 1;
  try {
    for (const region of settings.regions) {
      const own = several ? regionTerminal(terminal, region.name) : terminal;
      const lines = deliveryLines(settings.config.routes, routes, own);
      const gateway = await openStackGateway(region.port, {
        onAnswer: lines.onAnswer,
        onError: (error) => {
          own.err(`local gateway error: ${(error as Error).message}`);
        },
      }, several ? { name: region.name, firstPort: settings.port, count: settings.regions.length } : undefined);
      opened.push({ region, terminal: own, lines, gateway });
    }
  } catch (error) {
    await Promise.all(opened.map((o) => o.gateway.close()));
    throw error;
  }
  return opened;
}

/** What the stack holds of one running Region. */
interface RegionParts {
  readonly name: string;
  readonly gateway: StackGateway;
  readonly queues: QueuePair;
  /** Its routes' own queues, by route. */
  readonly routeQueues: ReadonlyMap<string, RouteQueue>;
  readonly reconcile: ReconcileRuns;
  readonly executorSource: RestartablePoller;
  readonly restartExecutor: () => Promise<{ abandonedBatches: number }>;
}

/** Wires one Region's functions on the shared table and its own queue, and serves them on its gateway. */
function startRegion(
  open: OpenRegion,
  queues: QueuePair,
  routeQueues: ReadonlyMap<string, RouteQueue>,
  context: {
    readonly settings: LocalSettings;
    readonly services: RunningServices;
    readonly imported: ImportedActions;
    readonly routes: ReturnType<typeof prepareRoutes>;
    readonly eventsTable: string;
    /** The reconcile timer runs here. */
    readonly timed: boolean;
  },
): RegionParts {
  const { settings, services, imported, eventsTable } = context;
  const { config } = settings;
  const { clients } = services;
  const { terminal, lines, gateway } = open;
  // What the construct sets as RETRYPROOF_QUEUE_URL and RETRYPROOF_ROUTE_QUEUE_URLS.
  const routeQueueUrls = Object.fromEntries([...routeQueues].map(([route, q]) => [route, q.queueUrl]));
  // And RETRYPROOF_BODY_BUCKET: this Region's bucket of large bodies.
  const { bodyBucket } = open.region;
  const deployment: Deployment = { config, eventsTable, queueUrl: queues.queueUrl, routeQueueUrls, bodyBucket };

  // The ingest's duplicates and breaker trips per route, as CloudWatch would sum its metrics (the console's overview).
  const tally = new IngestTally();
  const ingest = wireIngest(deployment, clients, {
    metrics: new TallyMetrics(tally),
    secrets: new StaticSecretSource(Object.fromEntries(settings.secrets.map((s) => [s.secretName, s.secret]))),
    // The circuit breaker as deployed; its notices (its log line) are printed to this terminal.
    resumeCommand: (route) => `npx retryproof --local routes resume ${route}`,
    routes: context.routes,
    logger: lines.ingestLogger,
    // Every function here runs in this one process, on one clock: no second clock to allow for.
    // A copy counts as a repeat once its handler starts after the mark (the deployed margin, 11 s,
    // would let none of `send --dup`'s or the storm's quick copies count). A copy that starts
    // in the milliseconds between the mark and its answer could count here and not when deployed.
    answerMarginMs: LOCAL_ANSWER_MARGIN_MS,
  });
  const executor = wireExecutor(deployment, clients, {
    actions: imported.actions,
    // Released after 1 s, not 0: see local-message-visibility.ts (a fauxqs bug loses the message).
    // On the queue each message came from (its record's eventSourceARN), as deployed.
    visibility: localMessageVisibility(clients.sqs, workQueueUrls(deployment)),
    logger: executorLogger(terminal),
  });
  const reconcile = startReconcileRuns({
    config,
    everySeconds: context.timed ? settings.reconcileEverySeconds : 0,
    terminal,
    onReport: (report) => noteLastRun(clients.dynamo, eventsTable, report),
    reconcilerFor: (runConfig) =>
      createReconciler({ ...clients, bodyBucket, eventsTable, ledgers: imported.ledgers, queueUrl: queues.queueUrl, routeQueueUrls, config: runConfig }),
  });

  const sharedConcurrency = Math.min(config.queue.maxConcurrency, MAX_LOCAL_CONCURRENCY);
  const eventSource = (queueUrl: string, queueArn: string, concurrency: number, own: boolean): RestartablePoller =>
    restartablePoller(() =>
      startPoller({
        handler: executor,
        sqs: clients.sqs,
        queueUrl,
        queueArn,
        batchSize: config.queue.batchSize,
        concurrency,
        // A route's event source may run 25 or 100 workers: one of them polls while its queue is empty.
        parkIdleWorkers: own,
        context: () => {
          // Each batch gets the function's timeout, as a Lambda invocation does.
          const deadline = Date.now() + config.executorTimeoutSeconds * 1000;
          return { ...lambdaContext(SERVICE.executor), getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
        },
        onError: (error) => {
          terminal.err(`event source error: ${(error as Error).message}`);
        },
      }),
    );
  const routeSources = new Map(
    config.routes
      .filter((route) => routeQueues.has(route.name))
      .map((route) => {
        const own = routeQueues.get(route.name) as RouteQueue;
        return [route.name, eventSource(own.queueUrl, own.queueArn, localRouteConcurrency(route, sharedConcurrency), true)] as const;
      }),
  );
  const executorSource = pollerGroup([eventSource(queues.queueUrl, queues.queueArn, sharedConcurrency, false), ...routeSources.values()]);
  const restartExecutor = (): Promise<{ abandonedBatches: number }> => {
    const abandonedBatches = executorSource.restart();
    terminal.out(`${new Date().toISOString().slice(11, 23)} executor event source restarted (${abandonedBatches} batches abandoned in flight)`);
    return Promise.resolve({ abandonedBatches });
  };

  gateway.serve({
    // The gateway's request id is the invocation's, so a refusal's log entry finds its delivery line.
    invoke: (event) => ingest(event, { ...lambdaContext(SERVICE.ingest), awsRequestId: event.requestContext.requestId }),
    admin: adminEndpoints({
      region: open.region.name,
      restartExecutor,
      reconcileOnce: reconcile.once,
      ledgers: imported.ledgers,
      stuckAfterSeconds: config.reconciliation.stuckAfterSeconds,
      sqs: clients.sqs,
      queues,
      s3: clients.s3,
      bodyBucket,
      routeQueues: [...routeQueues].map(([route, q]) => ({ route, queueUrl: q.queueUrl, executor: () => routeSources.get(route)?.status() })),
      executor: () => executorSource.status(),
      ingestCounts: () => tally.counts(),
    }),
  });
  return { name: open.region.name, gateway, queues, routeQueues, reconcile, executorSource, restartExecutor };
}

/**
 * Starts the local stack. The HTTP ports are taken first, so a busy port fails in
 * milliseconds, before any JVM starts.
 * @throws PortInUseError, SettingsError (another stack runs in the same folder, or an
 *   action module is missing or of the wrong shape), or the error of a part that did not
 *   start (Java missing, for one; `localSetup` failing)
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const { settings, out, err } = options;
  const { config, dir } = settings;
  const terminal: Terminal = { out, err };
  await refuseSecondStack(dir);

  const routes = prepareRoutes(config.routes);
  // Checked before any port or service: a clash of queue names is a setting to change.
  const queueNames = regionQueueNames(settings.regions.map((r) => r.queue), config);
  const opened = await openGateways(settings, routes, terminal);
  options.onPortsTaken?.();
  const closeGateways = async (): Promise<void> => {
    await Promise.all(opened.map((o) => o.gateway.close()));
  };
  const tables = { eventsTable: LOCAL_TABLES.eventsTable, ledgerTable: config.demo ? LOCAL_TABLES.ledgerTable : undefined };
  let services: RunningServices | undefined;
  let imported: ImportedActions;
  try {
    services = await startLocalServices(dir, {
      ...tables,
      queues: settings.regions.map((r) => r.queue),
      routeQueues: new Map(queueNames.map((q) => [q.queue, q.routeQueues])),
      bodyBuckets: settings.regions.map((r) => r.bodyBucket),
      maxReceiveCount: config.queue.maxReceiveCount,
      visibilityTimeoutSeconds: config.queue.visibilityTimeoutSeconds,
    });
    imported = await loadActions(settings, services, options.localSetup);
  } catch (error) {
    await services?.stop();
    await closeGateways();
    throw error;
  }
  const running = services;
  const queuesOf = (region: LocalRegion): QueuePair => {
    const pair = running.queues.get(region.queue);
    if (pair === undefined) throw new Error(`the queue ${region.queue} of region ${region.name} was not created`);
    return pair;
  };
  const routeQueuesOf = (region: LocalRegion): ReadonlyMap<string, RouteQueue> => running.routeQueues.get(region.queue) ?? new Map<string, RouteQueue>();

  const endpoints = localEndpointsOf(
    settings,
    {
      regions: opened.map((o) => ({
        name: o.region.name,
        httpUrl: o.gateway.url,
        queues: queuesOf(o.region),
        routeQueues: routeQueuesOf(o.region),
        bodyBucket: o.region.bodyBucket,
      })),
      services,
    },
    tables,
  );
  const parts = opened.map((open, i) =>
    startRegion(open, queuesOf(open.region), routeQueuesOf(open.region), { settings, services: running, imported, routes, eventsTable: tables.eventsTable, timed: i === 0 }),
  );
  await writeEndpoints(dir, endpoints);

  let stopping: Promise<void> | undefined;
  // Resolved by abandon(): the stop then waits no longer for the executors' batches.
  let abandonBatches = (): void => undefined;
  const abandoned = new Promise<void>((resolve) => {
    abandonBatches = resolve;
  });
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await Promise.all(parts.flatMap((p) => [p.gateway.close(), p.reconcile.stop()]));
      await Promise.race([Promise.all(parts.map((p) => p.executorSource.stop('drain'))), abandoned]);
      await running.stop();
      await removeEndpoints(dir);
    })();
    return stopping;
  };
  const abandon = (): Promise<void> => {
    // Marks the batches killed first, so none deletes its messages once the clients are gone.
    for (const p of parts) void p.executorSource.stop('abandon');
    abandonBatches();
    return stop();
  };
  const first = parts[0];
  if (first === undefined) throw new Error('startLocalStack: a stack runs at least one region');

  return {
    url: first.gateway.url,
    endpoints,
    regions: parts.map((p) => ({ name: p.name, url: p.gateway.url, restartExecutor: p.restartExecutor, reconcileOnce: p.reconcile.once })),
    restartExecutor: async () => {
      const each = await Promise.all(parts.map((p) => p.restartExecutor()));
      return { abandonedBatches: each.reduce((sum, r) => sum + r.abandonedBatches, 0) };
    },
    reconcileOnce: first.reconcile.once,
    stop,
    running: () => {
      const each = parts.map((p) => p.executorSource.running());
      return { messages: each.reduce((sum, w) => sum + w.messages, 0), atMostMs: Math.max(0, ...each.map((w) => w.atMostMs)) };
    },
    abandon,
  };
}
