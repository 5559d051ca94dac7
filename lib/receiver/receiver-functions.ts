import { Annotations, Duration } from 'aws-cdk-lib';
import type { CfnResource } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ENV } from '../../lambdas/config/env.ts';
import { CONFIG_METADATA } from '../../lambdas/config/receiver-descriptor.ts';
import type { ResolvedConfig, ResolvedRoute } from '../../lambdas/config/resolve-config.ts';
import { INGEST_TIMEOUT_SECONDS } from '../../lambdas/config/route-config.ts';
import { SERVICE } from '../../lambdas/observability/metric-catalogue.ts';
import { RECONCILER_NODE_OPTIONS, RECONCILER_TIMEOUT_SECONDS } from '../../lambdas/reconciler/reconciler-budget.ts';
import { routeQueueName } from '../stateful/work-queue.ts';
import { ReconcileSchedule } from '../stateless/reconcile-schedule.ts';
import { ReceiverMetrics } from '../stateless/retryproof-metrics.ts';
import { RetryproofFunction, lambdaEntry } from '../stateless/retryproof-function.ts';
import type { RetryproofFunctionProps } from '../stateless/retryproof-function.ts';
import { shippedConfigJson } from '../stateless/shipped-config.ts';
import { WebhookApi } from '../stateless/webhook-api.ts';
import { GeneratedEntries } from './generated-entries.ts';
import type { ReceiverSettings } from './receiver-settings.ts';
import type { ReceiverState } from './receiver-stateful.ts';

/** Reconciler runs are bounded by this; a run that needs longer continues next hour. */
const RECONCILER_TIMEOUT = Duration.seconds(RECONCILER_TIMEOUT_SECONDS);
const INGEST_TIMEOUT = Duration.seconds(INGEST_TIMEOUT_SECONDS);
/**
 * What one function may reserve in an account at Lambda's default quota of 1,000 concurrent
 * executions: "you can reserve concurrency for as many functions as you like, as long as you
 * leave at least 100 simultaneous executions unreserved" (Lambda API Reference, PutFunctionConcurrency).
 */
const ACCOUNT_RESERVABLE_AT_DEFAULT_QUOTA = 900;

/** A receiver's three functions, and the metrics they emit. */
export interface ReceiverFunctions {
  readonly ingest: RetryproofFunction;
  readonly executor: RetryproofFunction;
  readonly reconciler: RetryproofFunction;
  /** Each receiver's metrics in a namespace of its own, named like its resources. */
  readonly metrics: ReceiverMetrics;
}

/** What the three functions share: their settings, their environment and the configuration they ship. */
type SharedFunctionProps = Pick<RetryproofFunctionProps, 'metricNamespace' | 'logRetentionDays' | 'tracing' | 'environment' | 'shippedConfig'>;

/**
 * Makes the ingest, the executor and the reconciler. No function reads the DLQ: dead-letter
 * copies reach it through the work queues' redrive policies, and only the operator CLI lists it
 * (from the DlqUrl output). The configuration and the routes' queue names go into each function's
 * code, the names of resources into its environment (docs/architecture.md, "The configuration ships in the code").
 */
export function makeReceiverFunctions(receiver: Construct, settings: ReceiverSettings, state: ReceiverState): ReceiverFunctions {
  const { resolved, namePrefix, shipped } = settings;
  const isolated = resolved.routes.filter((r) => r.ownQueue);
  // Two receivers never count into, alarm on or keep alive each other's numbers.
  const metrics = new ReceiverMetrics(namePrefix);
  const shared: SharedFunctionProps = {
    metricNamespace: metrics.namespace,
    logRetentionDays: resolved.logRetentionDays,
    tracing: resolved.tracing,
    environment: {
      [ENV.eventsTable]: state.eventsTable.tableName,
      [ENV.queueUrl]: state.work.queue.queueUrl,
      [ENV.bodyBucket]: state.bodyBucket.bucketName,
    },
    shippedConfig: shippedConfigJson(shipped, new Map(isolated.map((r) => [r.name, routeQueueName(namePrefix, r.name)]))),
  };
  const entries = new GeneratedEntries(receiver);
  const ingest = new RetryproofFunction(receiver, 'Ingest', {
    ...shared,
    serviceName: SERVICE.ingest,
    entry: lambdaEntry('ingest/handler'),
    description: 'retryproof: verifies, records and enqueues each webhook delivery',
    timeout: INGEST_TIMEOUT,
    // Memory buys CPU: at 512 MB the HMAC and SHA-256 of the largest body and the cold
    // start stay well under the sender's patience, at a cost of fractions of a cent.
    memorySize: 512,
    // No alarm topic: a breaker trip is its log line and the route state, and the alarm on
    // its metric (RoutePaused, or BreakerTripped on an alerting route) tells the topic.
  });
  const executor = makeExecutor(receiver, settings, shared, entries);
  const ledgers = new Map([...settings.sources].flatMap(([name, s]) => (s.ledger === undefined ? [] : [[name, s.ledger] as const])));
  const reconciler = new RetryproofFunction(receiver, 'Reconciler', {
    ...shared,
    serviceName: SERVICE.reconciler,
    entry: entries.write('reconciler', lambdaEntry('reconciler/lambda'), 'reconcilerLambda', ledgers),
    description: 'retryproof: re-enqueues stuck work and reverses duplicate effects',
    timeout: RECONCILER_TIMEOUT,
    memorySize: 512,
    // No alarm topic: a run's report is in its log, which the findings alarm points to.
    // Its V8 heap bounded as npm run bench:reconcile measured it (reconciler-budget.ts).
    environment: { ...shared.environment, NODE_OPTIONS: RECONCILER_NODE_OPTIONS },
  });
  // What the operator CLI reads as the receiver's configuration (receiver-descriptor.ts).
  (reconciler.node.defaultChild as CfnResource).addMetadata(CONFIG_METADATA, shipped);
  return { ingest, executor, reconciler, metrics };
}

/** The executor, its concurrency reserved for every event source it will have, and what that asks of the account. */
function makeExecutor(receiver: Construct, settings: ReceiverSettings, shared: SharedFunctionProps, entries: GeneratedEntries): RetryproofFunction {
  const { resolved } = settings;
  const reserved = resolved.queue.maxConcurrency + resolved.routes.filter((r) => r.ownQueue).reduce((sum, r) => sum + routeConcurrency(r, resolved), 0);
  const executor = new RetryproofFunction(receiver, 'Executor', {
    ...shared,
    serviceName: SERVICE.executor,
    entry: entries.write('executor', lambdaEntry('executor/lambda'), 'executorLambda', mapValues(settings.sources, (s) => s.entry)),
    description: 'retryproof: claims each accepted delivery and runs its action once',
    // The longest lease plus the completion margin: a live worker never outlives its lease.
    timeout: Duration.seconds(resolved.executorTimeoutSeconds),
    memorySize: 512,
    // At least the event source's maximum concurrency, so Lambda never throttles the poller's
    // invocations: a throttled batch goes back to the queue and each of its messages spends a
    // receive toward maxReceiveCount ("If your function is throttled, returns an error, or
    // doesn't respond, the message becomes visible again", Lambda Developer Guide, "Using Lambda
    // with Amazon SQS"). AWS advises against a maximum concurrency above the reserved
    // concurrency, "as doing so can lead to throttling" (AWS Knowledge Center, "lambda-sqs-scaling";
    // Lambda Developer Guide, "Configuring scaling behavior for SQS event source mappings").
    // The reservation also guarantees that concurrency: no other function of the account
    // can starve the executor (it needs 100 unreserved executions left in the account).
    // With routes on their own queues it is the sum over the event sources: each has "a
    // separate maximum concurrency setting", and the same guide page asks for a reserved
    // concurrency of at least their total, or Lambda may throttle the messages.
    reservedConcurrentExecutions: reserved,
  });
  // New accounts often have a quota of 10, and CreateFunction then fails: "New AWS accounts have
  // reduced concurrency ... quotas" (Lambda Developer Guide, "Lambda quotas"); docs/operating.md.
  Annotations.of(executor).addInfo(
    `retryproof: the executor reserves ${reserved} concurrent executions, and Lambda keeps 100 of an account's unreserved: ` +
      `the account's Lambda concurrency quota in this Region must be at least ${reserved + 100} ` +
      "(aws lambda get-account-settings --query AccountLimit.ConcurrentExecutions); a new account's is often 10, and the first deploy then fails",
  );
  if (reserved > ACCOUNT_RESERVABLE_AT_DEFAULT_QUOTA) {
    // A deploy would fail on an account still at the default quota; one with a raised quota is fine.
    Annotations.of(executor).addWarningV2(
      'retryproof:executor-reservation',
      `the executor reserves ${reserved} concurrent executions (queue.maxConcurrency and each own queue's concurrency, summed): ` +
        `an account at Lambda's default quota of 1,000 can reserve at most ${ACCOUNT_RESERVABLE_AT_DEFAULT_QUOTA}, since 100 must stay unreserved; ` +
        'raise the account\'s concurrency quota first, or lower the concurrencies',
    );
  }
  return executor;
}

/** The event source's maxConcurrency on a route's own queue: its `concurrency`, else the shared queue's. */
export function routeConcurrency(route: ResolvedRoute, resolved: ResolvedConfig): number {
  return route.concurrency ?? resolved.queue.maxConcurrency;
}

function mapValues<V, W>(map: ReadonlyMap<string, V>, fn: (value: V) => W): Map<string, W> {
  return new Map([...map].map(([key, value]) => [key, fn(value)]));
}

/** What starts the functions: the HTTP API the senders call, and the schedule of reconciler runs. */
export interface ReceiverTriggers {
  readonly api: WebhookApi;
  readonly schedule: ReconcileSchedule;
}

/** Makes the HTTP API that invokes the ingest and the schedule that invokes the reconciler. */
export function makeReceiverTriggers(receiver: Construct, settings: ReceiverSettings, functions: ReceiverFunctions): ReceiverTriggers {
  const { resolved } = settings;
  const api = new WebhookApi(receiver, 'Webhooks', {
    apiName: settings.namePrefix,
    ingest: functions.ingest,
    throttlingRateLimit: resolved.api.throttlingRateLimit,
    throttlingBurstLimit: resolved.api.throttlingBurstLimit,
    logRetentionDays: resolved.logRetentionDays,
  });
  const schedule = new ReconcileSchedule(receiver, 'Reconcile', { reconciler: functions.reconciler, everyMinutes: resolved.reconciliation.everyMinutes });
  return { api, schedule };
}
