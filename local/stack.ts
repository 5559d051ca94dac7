/**
 * The local stack: DynamoDB Local and fauxqs with their data on disk, the real ingest
 * handler behind a local API Gateway, the real executor behind a local SQS event source,
 * and the real reconciler on a timer. Everything the deployed stack wires, wired here
 * once, against local services; `local/start.ts` only adds the process around it.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { actionRegistryOf, ledgersOf } from '../lambdas/actions/action-modules.ts';
import { DEMO_ACTION } from '../lambdas/config/resolve-config.ts';
import { DEMO_LEDGER_TABLE_ENV } from '../lambdas/demo/demo-environment.ts';
import { createExecutorHandler } from '../lambdas/executor/create-executor-handler.ts';
import { createIngestHandler } from '../lambdas/ingest/create-ingest-handler.ts';
import { prepareRoutes } from '../lambdas/ingest/prepared-route.ts';
import { createMetrics } from '../lambdas/observability/powertools.ts';
import { SqsWorkQueue } from '../lambdas/queue/sqs-work-queue.ts';
import { createReconciler } from '../lambdas/reconciler/create-reconciler.ts';
import type { ReconcileReport } from '../lambdas/reconciler/reconcile.ts';
import { StaticSecretSource } from './static-secret-source.ts';
import { DynamoDbEventStore } from '../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../lambdas/store/dynamodb-execution-store.ts';
import { DynamoDbRouteStateStore } from '../lambdas/store/dynamodb-route-state-store.ts';
import { ensureQueuePair, ensureTables, localDynamoClient, localSqsClient } from './aws-clients.ts';
import { readEndpointsFile, isAlive, removeEndpoints, writeEndpoints } from './endpoints-file.ts';
import type { LocalEndpoints } from './endpoints-file.ts';
import { startPoller } from './executor-poller.ts';
import type { Poller, RunningWork } from './executor-poller.ts';
import { createGateway, listen } from './http-gateway.ts';
import type { AdminHandler } from './http-gateway.ts';
import { lambdaContext } from './http-api-event.ts';
import { LineLogger } from './line-logger.ts';
import { localMessageVisibility } from './local-message-visibility.ts';
import { LOCAL_REGION, startLocalDynamo, startLocalSqs } from './local-aws.ts';
import type { LocalDynamo, LocalSqs } from './local-aws.ts';
import { SettingsError } from './local-settings.ts';
import type { LocalSettings } from './local-settings.ts';
import { deliveryIdOfAnswer, deliveryLine, executionLine, reconcileLine, unauthorizedDetail } from './log-lines.ts';

export const LOCAL_TABLES = { eventsTable: 'retryproof-events', ledgerTable: 'retryproof-ledger' } as const;
export const LOCAL_QUEUE = 'retryproof-work';
/** Batches the local event source runs at once, at most: a laptop, not a fleet. */
const MAX_LOCAL_CONCURRENCY = 3;

/** The HTTP port is taken. */
export class PortInUseError extends Error {
  readonly port: number;
  constructor(port: number) {
    super(`port ${port} is already in use: stop what listens there, or start with another PORT (for example PORT=${port + 1} npm start)`);
    this.name = 'PortInUseError';
    this.port = port;
  }
}

export interface ReconcileRequest {
  /** Records younger than this are left alone. @default the stack's settle seconds */
  readonly settleSeconds?: number;
  /** RECEIVED work not sent for this long is re-enqueued. @default the stack's stuck-after seconds */
  readonly stuckAfterSeconds?: number;
  readonly fromMs?: number;
  readonly toMs?: number;
}

export interface LocalStack {
  readonly url: string;
  readonly endpoints: LocalEndpoints;
  /** Kills the executor's event source with its batches in flight and starts a new one. */
  restartExecutor(): Promise<{ abandonedBatches: number }>;
  /** One reconciliation now; runs never overlap. */
  reconcileOnce(request?: ReconcileRequest): Promise<ReconcileReport>;
  /** Stops everything; resolves when every part has stopped. Safe to call twice. */
  stop(): Promise<void>;
  /** What a stop waits for: the messages the executor runs now, and how long they may take. */
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
  /** One line of normal output, without its newline. */
  readonly out: (line: string) => void;
  /** One line about a problem. */
  readonly err: (line: string) => void;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/**
 * Starts the local stack. The HTTP port is taken first, so a busy port fails in
 * milliseconds, before any JVM starts.
 * @throws PortInUseError, SettingsError (another stack runs in the same folder), or the
 *   error of a local service that did not start (Java missing, for one)
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const { settings, out, err } = options;
  const { config, dir } = settings;

  const previous = await readEndpointsFile(dir).catch(() => undefined);
  if (previous !== undefined && previous.pid !== process.pid && isAlive(previous.pid)) {
    throw new SettingsError(`a local stack already runs in ${dir} (pid ${previous.pid}): stop it, or set RETRYPROOF_LOCAL_DIR to another folder`);
  }

  let ready = false;
  // Filled in once the services run; until then the gateway answers 503.
  const wired: { ingest?: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2> } = {};
  const admin = new Map<string, AdminHandler>();
  const prepared = prepareRoutes(config.routes);
  // The verifier's reason for a 401, by request id, from the ingest's log to the delivery line.
  const refusals = new Map<string, string>();
  const server: Server = createGateway({
    invoke: (event) => {
      if (wired.ingest === undefined) return Promise.reject(new Error('the ingest handler is not wired'));
      return wired.ingest(event);
    },
    admin,
    isReady: () => ready,
    onAnswer: (event, answer, ms) => {
      const route = event.pathParameters?.route ?? '';
      let id = deliveryIdOfAnswer(answer.body);
      if (id === undefined) {
        // Refusals name no key: read it from the headers only (never the body), for the line.
        const source = prepared.get(route)?.keySource;
        try {
          if (source !== undefined) {
            const noBody = (): never => {
              throw new Error('no body');
            };
            id = `${route}/${source({ headers: event.headers, json: noBody, fingerprint: noBody })}`;
          }
        } catch {
          id = undefined;
        }
      }
      const refusal = refusals.get(event.requestContext.requestId);
      refusals.delete(event.requestContext.requestId);
      let title: string | undefined;
      if ((answer.statusCode ?? 0) >= 400) {
        try {
          title = (JSON.parse(answer.body ?? '{}') as { title?: string }).title;
        } catch {
          title = undefined;
        }
      }
      out(
        deliveryLine({
          route,
          id,
          status: answer.statusCode ?? 0,
          replayed: answer.headers?.['idempotent-replayed'] === 'true',
          ms,
          ...(title === undefined ? {} : { title }),
          ...(refusal === undefined ? {} : { detail: unauthorizedDetail(refusal, config.routes.find((r) => r.name === route)?.signature) }),
        }),
      );
    },
    onError: (error) => {
      err(`local gateway error: ${(error as Error).message}`);
    },
  });
  try {
    await listen(server, settings.port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(settings.port);
    throw error;
  }
  const closeServer = (): Promise<void> =>
    new Promise((resolve) => {
      // Idle keep-alive connections close now; busy ones get a few seconds to answer.
      const force = setTimeout(() => {
        server.closeAllConnections();
      }, 5_000);
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });

  let dynamo: LocalDynamo | undefined;
  let sqs: LocalSqs | undefined;
  const stopServices = async (): Promise<void> => {
    await Promise.all([sqs?.stop(), dynamo?.stop()]);
  };
  try {
    await mkdir(join(dir, 'dynamodb'), { recursive: true });
    await mkdir(join(dir, 'sqs'), { recursive: true });
    const [startedDynamo, startedSqs] = await Promise.allSettled([
      startLocalDynamo(join(dir, 'dynamodb')),
      startLocalSqs({ dataDir: join(dir, 'sqs') }),
    ]);
    if (startedDynamo.status === 'fulfilled') dynamo = startedDynamo.value;
    if (startedSqs.status === 'fulfilled') sqs = startedSqs.value;
    if (startedDynamo.status === 'rejected') throw startedDynamo.reason;
    if (startedSqs.status === 'rejected') throw startedSqs.reason;
  } catch (error) {
    await stopServices();
    await closeServer();
    throw error;
  }
  if (dynamo === undefined || sqs === undefined) throw new Error('unreachable: local services not started');

  const ddb = localDynamoClient(dynamo.endpoint);
  const sqsClient = localSqsClient(sqs.endpoint);
  let queues: Awaited<ReturnType<typeof ensureQueuePair>>;
  try {
    await ensureTables(ddb, LOCAL_TABLES);
    queues = await ensureQueuePair(sqsClient, sqs.endpoint, LOCAL_QUEUE, {
      maxReceiveCount: config.queue.maxReceiveCount,
      visibilityTimeoutSeconds: config.queue.visibilityTimeoutSeconds,
    });
  } catch (error) {
    ddb.destroy();
    sqsClient.destroy();
    await stopServices();
    await closeServer();
    throw error;
  }

  // The ingest: logs only its errors; the gateway prints the per-delivery line.
  const ingest = createIngestHandler({
    routes: prepared,
    store: new DynamoDbEventStore(ddb, LOCAL_TABLES.eventsTable),
    queue: new SqsWorkQueue(sqsClient, queues.queueUrl),
    secrets: new StaticSecretSource(Object.fromEntries(settings.secrets.map((s) => [s.secretName, s.secret]))),
    now: Date.now,
    resendAfterMs: config.queue.resendAfterSeconds * 1000,
    // The circuit breaker as deployed; its notices go to this terminal instead of SNS.
    breaker: {
      routeState: new DynamoDbRouteStateStore(ddb, LOCAL_TABLES.eventsTable),
      resumeCommand: (route) => `npx retryproof --local routes resume ${route}`,
      notifier: {
        notify: (subject, message) => {
          out(`notice: ${subject} ${JSON.stringify(message)}`);
          return Promise.resolve();
        },
      },
    },
    logger: new LineLogger(
      'retryproof-ingest',
      (entry) => {
        // A 401's reason goes on its delivery line, for this terminal only.
        if (entry.message === 'delivery refused' && typeof entry.reason === 'string' && typeof entry.function_request_id === 'string') {
          refusals.set(entry.function_request_id, entry.reason);
        } else if (entry.level === 'ERROR') {
          err(`ingest ${entry.level}: ${String(entry.message)} ${JSON.stringify(entry.error ?? '')}`);
        }
      },
      'WARN',
    ),
    metrics: createMetrics('retryproof-ingest'),
  });
  // The gateway's request id is the invocation's, so a refusal's log entry finds its delivery line.
  wired.ingest = (event) => ingest(event, { ...lambdaContext('retryproof-ingest'), awsRequestId: event.requestContext.requestId });

  // The demo's modules build their own clients from the environment: point them at the local services.
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    [DEMO_LEDGER_TABLE_ENV]: LOCAL_TABLES.ledgerTable,
  });
  const actionModules = { [DEMO_ACTION]: await import('../lambdas/demo/payout-action.ts') };
  const ledgers = ledgersOf({ [DEMO_ACTION]: await import('../lambdas/demo/payout-ledger.ts') });
  const executor = createExecutorHandler({
    routes: new Map(config.routes.map((r) => [r.name, r])),
    actions: actionRegistryOf(actionModules),
    store: new DynamoDbExecutionStore(ddb, LOCAL_TABLES.eventsTable),
    routeState: new DynamoDbRouteStateStore(ddb, LOCAL_TABLES.eventsTable),
    workQueue: new SqsWorkQueue(sqsClient, queues.queueUrl),
    // Released after 1 s, not 0: see local-message-visibility.ts (a fauxqs bug loses the message).
    visibility: localMessageVisibility(sqsClient, queues.queueUrl),
    maxReceiveCount: config.queue.maxReceiveCount,
    now: Date.now,
    logger: new LineLogger('retryproof-executor', (entry) => {
      const line = executionLine(entry);
      if (line !== undefined) out(line);
      else if (entry.level === 'ERROR') err(`executor error: ${String(entry.message)}`);
    }),
    metrics: createMetrics('retryproof-executor'),
  });
  const executorContext = () => {
    // Each batch gets the function's timeout, as a Lambda invocation does.
    const deadline = Date.now() + config.executorTimeoutSeconds * 1000;
    return { ...lambdaContext('retryproof-executor'), getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
  };
  const newPoller = (): Poller =>
    startPoller({
      handler: executor,
      sqs: sqsClient,
      queueUrl: queues.queueUrl,
      queueArn: queues.queueArn,
      batchSize: config.queue.batchSize,
      concurrency: Math.min(config.queue.maxConcurrency, MAX_LOCAL_CONCURRENCY),
      context: executorContext,
      onError: (error) => {
        err(`event source error: ${(error as Error).message}`);
      },
    });
  let poller = newPoller();
  const retired: Promise<void>[] = [];

  // The reconciler. Runs never overlap: the timer and an admin call queue behind each other.
  let reconcileChain: Promise<unknown> = Promise.resolve();
  const reconcileOnce = (request: ReconcileRequest = {}): Promise<ReconcileReport> => {
    const run = reconcileChain.then(async () => {
      const settle = request.settleSeconds ?? config.reconciliation.settleSeconds;
      const stuckAfter = request.stuckAfterSeconds ?? config.reconciliation.stuckAfterSeconds;
      const now = Date.now();
      const reconciler = createReconciler({
        dynamo: ddb,
        eventsTable: LOCAL_TABLES.eventsTable,
        ledgers,
        sqs: sqsClient,
        queueUrl: queues.queueUrl,
        config: { ...config, reconciliation: { ...config.reconciliation, settleSeconds: settle, stuckAfterSeconds: stuckAfter } },
      });
      const report = await reconciler.run({
        fromMs: request.fromMs ?? now - config.reconciliation.windowHours * 3_600_000,
        toMs: request.toMs ?? now - settle * 1000,
      });
      out(reconcileLine(report.counts, report.stoppedEarly));
      return report;
    });
    reconcileChain = run.catch(() => undefined);
    return run;
  };
  // The reconcile timer: the local form of the hourly EventBridge schedule.
  const timer =
    settings.reconcileEverySeconds > 0
      ? setInterval(() => {
          reconcileOnce().catch((error: unknown) => {
            err(`reconcile failed: ${(error as Error).message}`);
          });
        }, settings.reconcileEverySeconds * 1000)
      : undefined;

  const restartExecutor = async (): Promise<{ abandonedBatches: number }> => {
    const old = poller;
    const abandonedBatches = old.inFlight();
    poller = newPoller();
    // The old event source dies now; its batches end in the background and delete nothing.
    retired.push(old.stop('abandon'));
    out(`${new Date().toISOString().slice(11, 23)} executor event source restarted (${abandonedBatches} batches abandoned in flight)`);
    return Promise.resolve({ abandonedBatches });
  };

  admin.set('POST /_local/restart-executor', async () => ({ status: 200, body: await restartExecutor() }));
  admin.set('POST /_local/reconcile', async (body) => {
    const b = (body ?? {}) as Record<string, unknown>;
    const report = await reconcileOnce({
      settleSeconds: numberOr(b.settleSeconds, 0),
      stuckAfterSeconds: numberOr(b.stuckAfterSeconds, config.reconciliation.stuckAfterSeconds),
      ...(typeof b.fromMs === 'number' ? { fromMs: b.fromMs } : {}),
      ...(typeof b.toMs === 'number' ? { toMs: b.toMs } : {}),
    });
    return { status: 200, body: report };
  });
  admin.set('GET /_local/status', async () => {
    const depth = async (url: string) => {
      const a = await sqsClient.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      return {
        visible: Number(a.Attributes?.ApproximateNumberOfMessages ?? 0),
        inFlight: Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
        delayed: Number(a.Attributes?.ApproximateNumberOfMessagesDelayed ?? 0),
      };
    };
    return {
      status: 200,
      body: { pid: process.pid, queue: await depth(queues.queueUrl), dlq: await depth(queues.dlqUrl), executor: { ...poller.stats, batchesInFlight: poller.inFlight() } },
    };
  });

  const url = `http://127.0.0.1:${settings.port}`;
  const endpoints: LocalEndpoints = {
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    httpUrl: url,
    region: LOCAL_REGION,
    dynamoEndpoint: dynamo.endpoint,
    sqsEndpoint: sqs.endpoint,
    ...LOCAL_TABLES,
    queueUrl: queues.queueUrl,
    dlqUrl: queues.dlqUrl,
    queueArn: queues.queueArn,
    dlqArn: queues.dlqArn,
    routes: config.routes.map((r) => ({
      name: r.name,
      signature: r.signature,
      // What a sender signs with: the send tool and the storm read it.
      secret: settings.secrets.find((s) => s.route === r.name)?.signingSecret ?? '',
      leaseSeconds: r.leaseSeconds,
    })),
    settings: {
      visibilityTimeoutSeconds: config.queue.visibilityTimeoutSeconds,
      maxReceiveCount: config.queue.maxReceiveCount,
      reconcileEverySeconds: settings.reconcileEverySeconds,
      stuckAfterSeconds: config.reconciliation.stuckAfterSeconds,
      settleSeconds: config.reconciliation.settleSeconds,
    },
  };
  await writeEndpoints(dir, endpoints);
  ready = true;

  let stopping: Promise<void> | undefined;
  // Resolved by abandon(): the stop then waits no longer for the executor's batches.
  let abandonBatches = (): void => undefined;
  const abandoned = new Promise<void>((resolve) => {
    abandonBatches = resolve;
  });
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      ready = false;
      if (timer !== undefined) clearInterval(timer);
      await closeServer();
      await reconcileChain;
      await Promise.race([Promise.all([poller.stop('drain'), ...retired]), abandoned]);
      ddb.destroy();
      sqsClient.destroy();
      await stopServices();
      await removeEndpoints(dir);
    })();
    return stopping;
  };

  const abandon = (): Promise<void> => {
    // Marks the batches killed first, so none deletes its messages once the clients are gone.
    void poller.stop('abandon');
    abandonBatches();
    return stop();
  };

  return { url, endpoints, restartExecutor, reconcileOnce, stop, running: () => poller.running(), abandon };
}
