import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Annotations, Arn, ArnFormat, CfnOutput, Duration, Fn, Lazy, Stack, Stage, Token, Validations } from 'aws-cdk-lib';
import type { CfnElement, CfnResource } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { TableGrants, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Bucket, BucketGrants } from 'aws-cdk-lib/aws-s3';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { NAME_PREFIX, NAME_PREFIX_RULE } from '../lambdas/config/config-schema.ts';
import { ENV } from '../lambdas/config/env.ts';
import { CONFIG_METADATA, RECEIVER_DESCRIPTOR_VERSION, RECEIVER_OUTPUT_DESCRIPTION, RECEIVER_OUTPUT_ID } from '../lambdas/config/receiver-descriptor.ts';
import type { ReceiverDescriptor } from '../lambdas/config/receiver-descriptor.ts';
import { ConfigError, assertActionsSupplied, resolveConfig } from '../lambdas/config/resolve-config.ts';
import { needsReplayMemory } from '../lambdas/domain/idempotency-key.ts';
import { longestTtlSeconds } from '../lambdas/domain/body-object.ts';
import type { ResolvedConfig, ResolvedRoute } from '../lambdas/config/resolve-config.ts';
import type { ActionSource, RetryproofConfig } from '../lambdas/config/route-config.ts';
import { INGEST_TIMEOUT_SECONDS } from '../lambdas/config/route-config.ts';
import { SERVICE } from '../lambdas/observability/metric-catalogue.ts';
import { RECONCILER_NODE_OPTIONS, RECONCILER_TIMEOUT_SECONDS } from '../lambdas/reconciler/reconciler-budget.ts';
import { EVENTS_TABLE, LEDGER_TABLE } from '../lambdas/store/table-schema.ts';
import { defaultPolicyOf, nagResource } from './nag.ts';
import { regionalPlacement } from './regional-placement.ts';
import type { RegionalPlacement } from './regional-placement.ts';
import { AlarmTopic } from './stateful/alarm-topic.ts';
import { BODY_OBJECTS_KEY_PATTERN, BodyBucket, bodyBucketName, grantKeepBodies, grantReadBodyObjects } from './stateful/body-bucket.ts';
import { EventsTable } from './stateful/events-table.ts';
import { RouteSecrets, createdSecretName } from './stateful/route-secrets.ts';
import { WorkQueue, routeQueueName } from './stateful/work-queue.ts';
import { Observability } from './stateless/observability.ts';
import { ReceiverMetrics } from './stateless/retryproof-metrics.ts';
import { ReconcileSchedule } from './stateless/reconcile-schedule.ts';
import { RetryproofFunction, generatedEntriesDir, lambdaEntry } from './stateless/retryproof-function.ts';
import { shippedConfigJson } from './stateless/shipped-config.ts';
import { WebhookApi } from './stateless/webhook-api.ts';

/** Props of {@link WebhookReceiver}: the routes, the actions they run, and the rest of the configuration. */
export interface WebhookReceiverProps extends Omit<RetryproofConfig, 'demo' | 'actions'> {
  /**
   * The actions the routes name, each your own module: `entry` is the path (absolute, or
   * relative to the current directory) of a module whose default export is the action,
   * `async (ctx) => result`; `ledger`, optionally, of a module whose default export is the
   * action's ledger (`post`, `listWindow`, `reverse`), which the reconciler reads to find
   * and reverse a key that took effect twice. Both are bundled into the functions at synth.
   * A route that names an action missing here fails synth.
   */
  readonly actions: Readonly<Record<string, ActionSource>>;
  /**
   * The customer-managed KMS key of route secrets you import (`importSecret: true`): the
   * ingest gets kms:Decrypt on it. Secrets the receiver creates use the AWS managed key.
   * @default - imported secrets use the AWS managed key, which needs no grant
   */
  readonly secretsKey?: IKey;
}

/** Reconciler runs are bounded by this; a run that needs longer continues next hour. */
const RECONCILER_TIMEOUT = Duration.seconds(RECONCILER_TIMEOUT_SECONDS);
const INGEST_TIMEOUT = Duration.seconds(INGEST_TIMEOUT_SECONDS);
/**
 * What one function may reserve in an account at Lambda's default quota of 1,000 concurrent
 * executions: "you can reserve concurrency for as many functions as you like, as long as you
 * leave at least 100 simultaneous executions unreserved" (Lambda API Reference, PutFunctionConcurrency).
 */
const ACCOUNT_RESERVABLE_AT_DEFAULT_QUOTA = 900;

/**
 * A webhook receiver that makes sender retries harmless, as one construct: an HTTP API
 * whose ingest function verifies each delivery's signature, claims its idempotency key
 * with a conditional write and queues the work; an executor that runs your action for
 * each key once in effect; an hourly reconciler that re-enqueues stuck work and reverses
 * duplicate effects through your ledger; a circuit breaker per route; and the dashboard
 * and alarms that watch it all. Each function is granted exactly the actions it calls.
 *
 * Give your own action code what it needs through the functions this exposes, e.g.
 * `table.grantWriteData(receiver.executorFunction)` and
 * `receiver.executorFunction.addEnvironment('ORDERS_TABLE', table.tableName)`.
 *
 * Physical names start with `namePrefix` (by default the stack's name, then the
 * construct's id unless that is `Default`), so several receivers live in one stack.
 *
 * With `regions`, build one receiver per replica Region, each in a stack whose `env.region`
 * is that Region, all with one explicit `namePrefix`: the first replica's receiver defines
 * the global events table (MRSC) and the route secrets, replicated to the other replicas;
 * the others use their Region's replica of each by name, so their stacks must deploy after
 * the first one's (`stack.addStackDependency(first)`; createRetryproofApp does this).
 */
export class WebhookReceiver extends Construct {
  /** The HTTP API the senders call. */
  readonly api: HttpApi;
  /** The webhook base URL: a sender's URL is this followed by its route's name. */
  readonly url: string;
  /** The events table: one record per key, the single source of truth of each delivery. */
  readonly table: ITableV2;
  /** The shared work queue the executor consumes: the work of every route without a queue of its own. */
  readonly queue: IQueue;
  /**
   * The queue of each route with one of its own (`ownQueue`, implied by `rateLimit` or
   * `concurrency`), by route name; the executor consumes each, and each dead-letters to the one DLQ.
   */
  readonly routeQueues: ReadonlyMap<string, IQueue>;
  /** Work for people: redrive it from the SQS console once its cause is fixed. */
  readonly deadLetterQueue: IQueue;
  /**
   * The bucket of large bodies in this Region (the S3 claim check): bodies above a route's
   * `claimCheckAboveBytes`, named `bodies/<route>/<sha256(key)>/<fingerprint>`, each expiring
   * a while after the longest TTL. Its name is fixed, {@link bodyBucketName}.
   */
  readonly bodyBucket: IBucket;
  readonly ingestFunction: RetryproofFunction;
  /** Runs your actions: grant it what they call, and set the environment they read. */
  readonly executorFunction: RetryproofFunction;
  /** Reads your ledgers: grant it what they call. */
  readonly reconcilerFunction: RetryproofFunction;
  readonly dashboard: Dashboard;
  /** Every alarm, and each route pause, notifies this topic. */
  readonly alarmTopic: ITopic;
  /**
   * Each route's signing secret, by route name, as found by its name (`<namePrefix>/<secretName>`
   * for one the receiver creates, `secretName` for an imported one): grant your tools what they need on it.
   */
  readonly routeSecrets: ReadonlyMap<string, ISecret>;
  /** Every default applied, every derived number computed. */
  readonly config: ResolvedConfig;
  /** The prefix of every physical name. */
  readonly namePrefix: string;
  /**
   * With several Regions: this receiver's Region, and whether its stack defines the table.
   * @default - undefined: one Region
   */
  readonly placement: RegionalPlacement | undefined;
  #ledgerTableName: string | undefined;
  /** This Region's bucket of bodies, then, with several Regions, every other Region's, by name. */
  readonly #bodyBuckets: readonly IBucket[];

  constructor(scope: Construct, id: string, props: WebhookReceiverProps) {
    super(scope, id);
    const { secretsKey, ...config } = props;
    const resolved = resolveConfig(config);
    const actionNames = Object.keys(props.actions);
    assertActionsSupplied(resolved, actionNames);
    const stack = Stack.of(this);
    // An explicit prefix was checked by resolveConfig; the derived one is checked by the same rule.
    const namePrefix = props.namePrefix ?? defaultNamePrefix(stack.stackName, id);
    if (!NAME_PREFIX.test(namePrefix)) {
      throw new ConfigError(`the name prefix derived from the stack and the id, "${namePrefix}", is not ${NAME_PREFIX_RULE}: set namePrefix`);
    }
    this.config = resolved;
    this.namePrefix = namePrefix;
    const placement = resolved.regions === undefined ? undefined : regionalPlacement(this, resolved.regions, props.namePrefix);
    this.placement = placement;
    // Only the actions the routes run are bundled; the functions get no paths of this machine.
    const used = new Set(resolved.routes.map((r) => r.action));
    const sources = new Map(Object.entries(props.actions).filter(([name]) => used.has(name)));
    for (const [name, source] of sources) {
      for (const [what, path] of [['entry', source.entry], ['ledger', source.ledger]] as const) {
        if (path !== undefined && !existsSync(resolve(path))) {
          throw new ConfigError(`action "${name}": its ${what} ${path} does not exist (paths are relative to ${process.cwd()})`);
        }
      }
    }
    const { actions: _paths, ...written } = config;

    // Stateful.
    const eventsTable = eventsTableOf(this, placement, props.existingEventsTable);
    const executorTimeout = Duration.seconds(resolved.executorTimeoutSeconds);
    const isolated = resolved.routes.filter((r) => r.ownQueue);
    const work = new WorkQueue(this, 'Work', {
      namePrefix,
      maxReceiveCount: resolved.queue.maxReceiveCount,
      visibilityTimeout: Duration.seconds(resolved.queue.visibilityTimeoutSeconds),
      consumerTimeout: executorTimeout,
      ownQueueRoutes: isolated.map((r) => r.name),
    });
    // Every queue the functions send work to: the shared one first, then the routes' own.
    const workQueues = [work.queue, ...work.routeQueues.values()];
    // Named by the prefix, the account and the Region, so that another Region's functions find it
    // by name: a record accepted here may be re-sent by another Region's reconciler onto that
    // Region's queue, and its executor then reads (and renews) the body here.
    const bodies = new BodyBucket(this, 'Bodies', {
      bucketName: bodyBucketName(namePrefix, stack.account, stack.region),
      longestTtlSeconds: longestTtlSeconds(resolved.routes),
    });
    // The other Regions' buckets, by the same rule: their stacks create them (no resource here).
    const otherBodyBuckets = (placement?.otherReplicas ?? []).map((region) =>
      Bucket.fromBucketName(this, `BodiesIn-${region}`, bodyBucketName(namePrefix, stack.account, region)),
    );
    const bodyBuckets = [bodies.bucket, ...otherBodyBuckets];
    // With several Regions the first replica's stack creates each route secret and Secrets
    // Manager replicates it to the others, so its value is set once and cannot drift (a Region
    // with a stale copy would answer every delivery 401). The others import their replica by name.
    const replicatedHere = placement !== undefined && !placement.owner;
    // A secret the receiver creates carries its name prefix, as every name it creates does;
    // the functions read it under that name (the shipped configuration says so below).
    const secretNameOf = (r: { secretName: string; importSecret: boolean }) => (r.importSecret ? r.secretName : createdSecretName(namePrefix, r.secretName));
    const secrets = new RouteSecrets(this, 'Secrets', {
      routes: resolved.routes.map((r) => ({ route: r.name, secretName: secretNameOf(r), importSecret: r.importSecret || replicatedHere })),
      ...(placement?.owner === true ? { replicaRegions: placement.otherReplicas } : {}),
      logRetentionDays: resolved.logRetentionDays,
      metricNamespace: namePrefix,
    });
    const shipped: typeof written = {
      ...written,
      routes: written.routes.map((r) => ({ ...r, secretName: secretNameOf({ secretName: r.secretName, importSecret: r.importSecret === true }) })),
    };
    const alarms = new AlarmTopic(this, 'Alarms', { namePrefix, ...(resolved.alarmEmail === undefined ? {} : { email: resolved.alarmEmail }) });
    if (resolved.alarmEmail === undefined) {
      // Without a subscriber every alarm below notifies nobody; the deploy would look healthy.
      Annotations.of(alarms).addWarningV2(
        'retryproof:no-alarm-email',
        'no alarmEmail is set, so every alarm notifies a topic nobody subscribes to: ' +
          "set alarmEmail: 'you@example.com' (in retryproof.config.ts, or in the WebhookReceiver's props), or subscribe to the topic in the AlarmTopicArn output yourself",
      );
    }

    // Stateless. No function reads the DLQ: dead-letter copies reach it through the work
    // queues' redrive policies, and only the operator CLI lists it (from the DlqUrl output).
    // The configuration and the routes' queue names go into each function's code, the names of
    // resources into its environment (docs/architecture.md, "The configuration ships in the code").
    const shippedConfig = shippedConfigJson(shipped, new Map(isolated.map((r) => [r.name, routeQueueName(namePrefix, r.name)])));
    const shared = {
      [ENV.eventsTable]: eventsTable.tableName,
      [ENV.queueUrl]: work.queue.queueUrl,
      [ENV.bodyBucket]: bodies.bucket.bucketName,
    };
    const { logRetentionDays, tracing } = resolved;
    // Each receiver's metrics in a namespace of its own, named like its resources: two
    // receivers never count into, alarm on or keep alive each other's numbers.
    const metrics = new ReceiverMetrics(namePrefix);
    const entries = new GeneratedEntries(this);

    const ingest = new RetryproofFunction(this, 'Ingest', {
      serviceName: SERVICE.ingest,
      metricNamespace: metrics.namespace,
      entry: lambdaEntry('ingest/handler'),
      description: 'retryproof: verifies, records and enqueues each webhook delivery',
      timeout: INGEST_TIMEOUT,
      // Memory buys CPU: at 512 MB the HMAC and SHA-256 of the largest body and the cold
      // start stay well under the sender's patience, at a cost of fractions of a cent.
      memorySize: 512,
      logRetentionDays,
      tracing,
      // No alarm topic: a breaker trip is its log line and the route state, and the alarm on
      // its metric (RoutePaused, or BreakerTripped on an alerting route) tells the topic.
      environment: shared,
      shippedConfig,
    });
    const reserved = resolved.queue.maxConcurrency + isolated.reduce((sum, r) => sum + routeConcurrency(r, resolved), 0);
    const executor = new RetryproofFunction(this, 'Executor', {
      serviceName: SERVICE.executor,
      metricNamespace: metrics.namespace,
      entry: entries.write('executor', lambdaEntry('executor/lambda'), 'executorLambda', mapValues(sources, (s) => s.entry)),
      description: 'retryproof: claims each accepted delivery and runs its action once',
      // The longest lease plus the completion margin: a live worker never outlives its lease.
      timeout: executorTimeout,
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
      logRetentionDays,
      tracing,
      environment: shared,
      shippedConfig,
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
    const ledgers = new Map([...sources].flatMap(([name, s]) => (s.ledger === undefined ? [] : [[name, s.ledger] as const])));
    const reconciler = new RetryproofFunction(this, 'Reconciler', {
      serviceName: SERVICE.reconciler,
      metricNamespace: metrics.namespace,
      entry: entries.write('reconciler', lambdaEntry('reconciler/lambda'), 'reconcilerLambda', ledgers),
      description: 'retryproof: re-enqueues stuck work and reverses duplicate effects',
      timeout: RECONCILER_TIMEOUT,
      memorySize: 512,
      logRetentionDays,
      tracing,
      // No alarm topic: a run's report is in its log, which the findings alarm points to.
      // Its V8 heap bounded as npm run bench:reconcile measured it (reconciler-budget.ts).
      environment: { ...shared, NODE_OPTIONS: RECONCILER_NODE_OPTIONS },
      shippedConfig,
    });
    // What the operator CLI reads as the receiver's configuration (receiver-descriptor.ts).
    (reconciler.node.defaultChild as CfnResource).addMetadata(CONFIG_METADATA, shipped);

    // Least privilege: each grant names the exact actions its function calls, on the exact
    // resources: item actions on the table alone (TableV2.grant() adds index/* too, as grants
    // do for any table with indexes unless told otherwise), Query on the indexes read.
    // test/cdk/least-privilege.test.ts derives each function's list from the calls its code makes.
    const eventItems = new TableGrants({ table: eventsTable, hasIndex: false });

    // Claim and duplicate count, resend and breaker mark (UpdateItem), a new generation over an
    // expired record and the breaker's pause (PutItem), and the route's state when a key trips
    // a route paused already (GetItem).
    eventItems.actions(ingest, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
    // A route ordered per entity (orderBy): its lines live on the table (store/dynamodb-entity-order.ts),
    // read with Query on the table itself (an entity's places) by the ingest that places a record,
    // the executor that looks for its turn, and the reconciler that checks a waiting record's.
    const ordered = resolved.routes.some((r) => r.orderBy !== undefined);
    if (ordered) eventItems.actions(ingest, 'dynamodb:Query');
    // A route whose scheme signs no timestamp remembers each body (the replay memory, an
    // UpdateItem); a capture replayed after its record expired takes back the generation it
    // just claimed (forgetReplay, a conditional DeleteItem). Only such routes need to delete.
    if (resolved.routes.some((r) => needsReplayMemory(r.signature.scheme))) eventItems.actions(ingest, 'dynamodb:DeleteItem');
    // Each new delivery goes to its route's queue (lambdas/queue/routed-work-queue.ts).
    for (const queue of workQueues) queue.grant(ingest, 'sqs:SendMessage');
    for (const route of resolved.routes) {
      const secret = secrets.byRoute.get(route.name);
      if (secret === undefined) throw new Error(`route ${route.name} has no secret`);
      // grantRead() would add DescribeSecret, which nothing calls: Powertools' SecretsProvider
      // sends GetSecretValue only. A secret imported by name has no full ARN: -?????? stands
      // for the suffix Secrets Manager appends, as grantRead() writes it.
      Grant.addToPrincipal({
        grantee: ingest,
        actions: ['secretsmanager:GetSecretValue'],
        resourceArns: [secret.secretFullArn ?? `${secret.secretArn}-??????`],
      });
      // Every route secret is found by name (route-secrets.ts): its ARN ends in an unknown 6-character suffix.
      const whose = route.importSecret
        ? 'imports its secret'
        : replicatedHere
          ? `reads the replica of its secret, made by the ${resolved.regions?.replicas[0] ?? ''} stack,`
          : 'reads the secret the receiver ensures exists';
      Validations.of(defaultPolicyOf(ingest.serviceRole)).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${nagResource(this, secret.secretArn)}-??????]`,
        reason: `route "${route.name}" ${whose} by name; -?????? matches only the suffix Secrets Manager appends`,
      });
    }
    // An imported secret under a customer-managed key: without this, every delivery is a 503.
    secretsKey?.grantDecrypt(ingest);
    // Large bodies, in this Region's bucket only (the ingest names no other): PutObject stores one
    // before its claim (conditional, If-None-Match). GetObject because a body that was there
    // already (a key re-claimed after its record expired, or a retry of a claim that failed after
    // its put) is checked before the message is sent, HeadObject, which S3 authorises as GetObject,
    // and renewed when old, a copy onto itself: GetObject on the source, PutObject on the copy
    // (lambdas/queue/fresh-body-work-queue.ts). Never ListBucket: the ingest asks only about an
    // object S3 has just told it is there.
    BucketGrants.fromBucket(bodies.bucket).actionsOnObjectKeys(ingest, BODY_OBJECTS_KEY_PATTERN, 's3:GetObject', 's3:PutObject');
    acknowledgeBodyObjects(this, ingest, [bodies.bucket]);

    // Route state, read also right after parking (GetItem), claim, parking and fenced writes
    // (UpdateItem), the execution log (PutItem). No transaction: MRSC refuses them.
    eventItems.actions(executor, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
    if (ordered) eventItems.actions(executor, 'dynamodb:Query');
    // Dead-letter copies go to the route's WORK queue and reach the DLQ through its redrive
    // policy, so that every DLQ message has a source queue and the console's "redrive to source"
    // works; a rate-limited route's deferred wake-ups (DelaySeconds) go to its queue too.
    // The executor cannot write to the DLQ at all.
    for (const queue of workQueues) queue.grant(executor, 'sqs:SendMessage');
    // One event source per work queue, alike but for the concurrency: a route's own caps its
    // share of the executor (`concurrency`), so a slow or failing route never holds up the others.
    // The event source grants the polling calls on its queue (ReceiveMessage, DeleteMessage,
    // ChangeMessageVisibility, GetQueueAttributes, GetQueueUrl): the executor hands a message
    // back on the queue its record names (eventSourceARN).
    const eventSourceOf = (queue: IQueue, maxConcurrency: number) =>
      new SqsEventSource(queue, {
        reportBatchItemFailures: true,
        batchSize: resolved.queue.batchSize,
        maxBatchingWindow: Duration.seconds(resolved.queue.maxBatchingWindowSeconds),
        maxConcurrency,
      });
    executor.addEventSource(eventSourceOf(work.queue, resolved.queue.maxConcurrency));
    for (const route of isolated) executor.addEventSource(eventSourceOf(routeQueueOf(work, route.name), routeConcurrency(route, resolved)));
    // A message's body, read back from the bucket its pointer names: this Region's, or, with
    // several Regions, the one of the Region that accepted it. Reading alone would run the work,
    // but the executor also renews an old object before any message of its own points to it (a
    // copy onto itself), which S3 authorises as PutObject on the copy (grantKeepBodies).
    for (const bucket of bodyBuckets) grantKeepBodies(bucket, executor);
    acknowledgeBodyObjects(this, executor, bodyBuckets);

    // Route state and a record to re-send (GetItem), the window's open records, read whole
    // (BatchGetItem), the correction log (PutItem), resends, unparking and the retry partition
    // (UpdateItem); the window on byTime, parked and stranded records on parked (Query on
    // those two indexes, never on the table).
    eventItems.actions(reconciler, 'dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
    Grant.addToPrincipal({
      grantee: reconciler,
      actions: ['dynamodb:Query'],
      resourceArns: [EVENTS_TABLE.byTimeIndex.name, EVENTS_TABLE.parkedIndex.name].map((index) => `${eventsTable.tableArn}/index/${index}`),
    });
    for (const queue of workQueues) queue.grant(reconciler, 'sqs:SendMessage');
    // Several Regions: an MRSC table has no TTL, so the reconciler sweeps expired items
    // (expiry-sweep.ts): a record's partition and its key chunks (Query on the table), one
    // conditional DeleteItem each.
    if (resolved.regions !== undefined) eventItems.actions(reconciler, 'dynamodb:Query', 'dynamodb:DeleteItem');
    else if (ordered) eventItems.actions(reconciler, 'dynamodb:Query');
    // A re-send keeps the body it points to alive (HeadObject, and a copy onto itself when old),
    // and a parked record kept a TTL more has its body renewed first: in any Region's bucket, since
    // the reconciler re-sends every open record of the one table (grantKeepBodies).
    for (const bucket of bodyBuckets) grantKeepBodies(bucket, reconciler);
    acknowledgeBodyObjects(this, reconciler, bodyBuckets);

    const api = new WebhookApi(this, 'Webhooks', {
      apiName: namePrefix,
      ingest,
      throttlingRateLimit: resolved.api.throttlingRateLimit,
      throttlingBurstLimit: resolved.api.throttlingBurstLimit,
      logRetentionDays,
    });
    const schedule = new ReconcileSchedule(this, 'Reconcile', { reconciler, everyMinutes: resolved.reconciliation.everyMinutes });
    const observability = new Observability(this, 'Observability', {
      ingest,
      executor,
      reconciler,
      reconcilerLogs: reconciler.logs,
      reconcileScheduleGroup: schedule.group,
      reconcileEveryMinutes: resolved.reconciliation.everyMinutes,
      queue: work.queue,
      routeQueues: work.routeQueues,
      deadLetterQueue: work.deadLetterQueue,
      api: api.api,
      alarmTopic: alarms.topic,
      resolved,
      namePrefix,
      metrics,
      // Dashboards are account-wide, unlike the alarms and the queue: the region keeps a
      // second region's receiver from taking this one's dashboard.
      dashboardName: `${namePrefix}-${stack.region}`,
      secretNames: new Map(resolved.routes.map((r) => [r.name, secretNameOf(r)])),
    });

    new CfnOutput(this, 'ApiUrl', {
      description: 'Webhook base URL: give each sender this URL followed by its route name',
      value: api.webhookBaseUrl,
    });
    new CfnOutput(this, 'QueueUrl', { description: 'The work queue', value: work.queue.queueUrl });
    new CfnOutput(this, 'DlqUrl', { description: 'The dead-letter queue', value: work.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'The SNS topic every alarm notifies: subscribe to it, or set alarmEmail',
      value: alarms.topic.topicArn,
    });
    new CfnOutput(this, 'DlqConsoleUrl', {
      description: 'The DLQ in the SQS console, where "Start DLQ redrive" sends messages back',
      value: sqsConsoleUrl(stack, work.deadLetterQueue.queueUrl),
    });
    // The operator CLI finds this receiver by this output's value, whatever its id or stack
    // (receiver-descriptor.ts); the configuration it reads is the reconciler's metadata.
    new CfnOutput(this, RECEIVER_OUTPUT_ID, {
      description: `${RECEIVER_OUTPUT_DESCRIPTION} (${this.node.path})`,
      value: Lazy.string({
        produce: () => {
          const descriptor: ReceiverDescriptor = {
            retryproof: RECEIVER_DESCRIPTOR_VERSION,
            receiver: this.node.path.slice(stack.node.path.length + 1),
            namePrefix,
            region: stack.region,
            apiUrl: api.webhookBaseUrl,
            queueUrl: work.queue.queueUrl,
            ...(work.routeQueues.size === 0 ? {} : { routeQueueUrls: mapRecord(work.routeQueues, (q) => q.queueUrl) }),
            dlqUrl: work.deadLetterQueue.queueUrl,
            eventsTable: eventsTable.tableName,
            bodyBucket: bodies.bucket.bucketName,
            ...(this.#ledgerTableName === undefined ? {} : { ledgerTable: this.#ledgerTableName }),
            configResource: stack.getLogicalId(reconciler.node.defaultChild as CfnElement),
          };
          return stack.toJsonString(descriptor);
        },
      }),
    });
    if (placement !== undefined) {
      new CfnOutput(this, 'Region', { description: "This receiver's Region, one of the global table's replicas", value: placement.region });
      new CfnOutput(this, 'EventsTableName', { description: 'The global events table, the same in every Region', value: placement.tableName });
    }

    // Two receivers of one stack with one prefix would share physical names, and metrics.
    this.node.addValidation({
      validate: () =>
        Stack.of(this)
          .node.findAll()
          .filter((c): c is WebhookReceiver => c instanceof WebhookReceiver && c !== this && c.namePrefix === namePrefix)
          .map((other) => `the receivers ${this.node.path} and ${other.node.path} both have the name prefix "${namePrefix}": their resources' names and metrics would collide; set namePrefix on one`),
    });

    this.api = api.api;
    this.url = api.webhookBaseUrl;
    this.table = eventsTable;
    this.queue = work.queue;
    this.routeQueues = work.routeQueues;
    this.deadLetterQueue = work.deadLetterQueue;
    this.bodyBucket = bodies.bucket;
    this.#bodyBuckets = bodyBuckets;
    this.ingestFunction = ingest;
    this.executorFunction = executor;
    this.reconcilerFunction = reconciler;
    this.dashboard = observability.dashboard;
    this.alarmTopic = alarms.topic;
    this.routeSecrets = secrets.byRoute;
  }

  /** Names the demo's ledger table in the receiver's descriptor, so the CLI's `ledger` finds it. */
  describeLedgerTable(tableName: string): void {
    this.#ledgerTableName = tableName;
  }

  /**
   * Lets the functions use a ledger table laid out for the package's DynamoDbLedger (a
   * {@link LedgerTable}): the executor posts entries (PutItem, conditional, its old item back on
   * a refusal), the reconciler reads its window on the byHour index (Query, on that index only)
   * and reverses duplicates (UpdateItem; and GetItem with `undo`, which reads the entry first).
   * Item actions on the table alone: TableV2.grant() would add index/* too.
   */
  grantLedgerTable(table: ITableV2, options: { readonly undo?: boolean } = {}): void {
    const items = new TableGrants({ table, hasIndex: false });
    items.actions(this.executorFunction, 'dynamodb:PutItem');
    items.actions(this.reconcilerFunction, 'dynamodb:UpdateItem', ...(options.undo === true ? ['dynamodb:GetItem'] : []));
    Grant.addToPrincipal({
      grantee: this.reconcilerFunction,
      actions: ['dynamodb:Query'],
      resourceArns: [`${table.tableArn}/index/${LEDGER_TABLE.byHourIndex.name}`],
    });
  }

  /** Lets a person or a tool read the records (`retryproof inspect`, say): GetItem and Query. */
  grantReadRecords(grantee: IGrantable): void {
    this.table.grant(grantee, 'dynamodb:GetItem', 'dynamodb:Query');
  }

  /**
   * Lets a person or a tool read the large bodies (`retryproof inspect --body` of a delivery whose
   * body is in a bucket): GetObject on `bodies/*` of every Region's body bucket, and ListBucket on
   * each, so that an expired object reads as missing (404) rather than as refused (403). Bodies
   * carry customer data: {@link grantReadRecords} does not include this.
   */
  grantReadBodies(grantee: IGrantable): void {
    for (const bucket of this.#bodyBuckets) grantReadBodyObjects(bucket, grantee);
  }

  /**
   * Lets a person or a tool move dead letters back to the work queues, as `retryproof dlq redrive`
   * and the console's "Start DLQ redrive" do: list them (receive and release, ConsumeMessages),
   * start and follow an SQS message move task from the DLQ (sqs:StartMessageMoveTask and
   * sqs:ListMessageMoveTasks on the DLQ, the task's source), into the work queues (SendMessage,
   * which a move task needs on its destination, and which the local receive-send-delete uses;
   * the console's redrive returns each message to its own source queue, a route's own queue included).
   * These are the calls cli/operations/dead-letters.ts makes; StartMessageMoveTask is authorised
   * on its source queue (SQS API Reference, StartMessageMoveTask: "the source queue is the DLQ"),
   * and the task itself receives, deletes and sends the messages as the caller. And what
   * `retryproof redrive` needs: Query on the table's indexes (the sparse `failed` and `parked`
   * ones), GetItem of a route's state, UpdateItem for the redrive and unpark transitions, and
   * SendMessage to the work queues, each route's work to its own (lambdas/routes/bulk-redrive.ts).
   * A re-send of a large body keeps its object alive first, as every sender does: GetObject,
   * PutObject and ListBucket on the body buckets of every Region (lambdas/routes/route-control.ts,
   * sentQueueOf; lib/stateful/body-bucket.ts, grantKeepBodies).
   */
  grantRedrive(grantee: IGrantable): void {
    this.table.grant(grantee, 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem');
    this.deadLetterQueue.grantConsumeMessages(grantee);
    this.deadLetterQueue.grant(grantee, 'sqs:StartMessageMoveTask', 'sqs:ListMessageMoveTasks');
    this.queue.grantSendMessages(grantee);
    for (const queue of this.routeQueues.values()) queue.grantSendMessages(grantee);
    for (const bucket of this.#bodyBuckets) grantKeepBodies(bucket, grantee);
  }
}

/**
 * The events table: a table of the stack's Region; with several Regions, in the first
 * replica's stack the MRSC global table, in the others their Region's replica of it, by name
 * (its ARN is then this stack's Region's, so the grants name the local replica and its indexes).
 */
function eventsTableOf(scope: Construct, placement: RegionalPlacement | undefined, existing: string | undefined): ITableV2 {
  if (existing !== undefined) return adoptedEventsTable(scope, placement, existing);
  if (placement === undefined) return new EventsTable(scope, 'Events').table;
  if (placement.owner) {
    return new EventsTable(scope, 'Events', {
      tableName: placement.tableName,
      replication: { replicas: placement.otherReplicas, ...(placement.witness === undefined ? {} : { witness: placement.witness }) },
    }).table;
  }
  return TableV2.fromTableAttributes(scope, 'Events', { tableName: placement.tableName, grantIndexPermissions: true });
}

/**
 * The events table a destroy retained (or any existing one), by name or ARN: the receiver creates
 * none and grants, reads and names this one, its indexes included (grantIndexPermissions; the
 * Query grants name `<arn>/index/<name>`). A `cdk destroy` keeps the events table (RETAIN), and
 * a deploy after it would otherwise make a new, empty one: every key claimed before, the ones
 * senders still retry (Stripe for 3 days), would run again.
 * @throws ConfigError with several Regions (each Region's receiver finds the one global table by
 *   its fixed name already), or for an ARN of another Region than the stack's
 */
function adoptedEventsTable(scope: Construct, placement: RegionalPlacement | undefined, existing: string): ITableV2 {
  if (placement !== undefined) {
    throw new ConfigError(
      `existingEventsTable: ${existing} cannot be adopted with several Regions; the receivers already find the global table by its name, ` +
        `${placement.tableName}, in every Region (docs, "Redeploying after a destroy", several Regions: restore or re-import that table under its name)`,
    );
  }
  if (!existing.startsWith('arn:')) return TableV2.fromTableAttributes(scope, 'Events', { tableName: existing, grantIndexPermissions: true });
  const stack = Stack.of(scope);
  const region = Arn.split(existing, ArnFormat.SLASH_RESOURCE_NAME).region;
  if (!Token.isUnresolved(stack.region) && region !== stack.region) {
    throw new ConfigError(`existingEventsTable: ${existing} is in ${String(region)}, not in this stack's Region ${stack.region}; a receiver reads its table in its own Region`);
  }
  return TableV2.fromTableAttributes(scope, 'Events', { tableArn: existing, grantIndexPermissions: true });
}

/**
 * cdk-nag's AwsSolutions-IAM5 names each grant on `bodies/*` of a bucket: the objects' names are
 * made per delivery (route, key hash, fingerprint), so no narrower resource can name them.
 */
function acknowledgeBodyObjects(scope: Construct, fn: RetryproofFunction, buckets: readonly IBucket[]): void {
  for (const bucket of buckets) {
    Validations.of(defaultPolicyOf(fn.serviceRole)).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(scope, `${bucket.bucketArn}/${BODY_OBJECTS_KEY_PATTERN}`)}]`,
      reason: `each large body is an object named per delivery under ${BODY_OBJECTS_KEY_PATTERN} (route, key hash, fingerprint); the grant covers that prefix of a body bucket of this receiver's and nothing else of it`,
    });
  }
}

/** The stack's name, then the id unless it is `Default`, with what names refuse replaced by dashes. */
function defaultNamePrefix(stackName: string, id: string): string {
  const raw = id === 'Default' ? stackName : `${stackName}-${id}`;
  return raw.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 40);
}

function mapValues<V, W>(map: ReadonlyMap<string, V>, fn: (value: V) => W): Map<string, W> {
  return new Map([...map].map(([key, value]) => [key, fn(value)]));
}

function mapRecord<V, W>(map: ReadonlyMap<string, V>, fn: (value: V) => W): Record<string, W> {
  return Object.fromEntries([...map].map(([key, value]) => [key, fn(value)]));
}

/** The event source's maxConcurrency on a route's own queue: its `concurrency`, else the shared queue's. */
function routeConcurrency(route: ResolvedRoute, resolved: ResolvedConfig): number {
  return route.concurrency ?? resolved.queue.maxConcurrency;
}

function routeQueueOf(work: WorkQueue, route: string): IQueue {
  const queue = work.routeQueues.get(route);
  if (queue === undefined) throw new Error(`route ${route} has no queue of its own`);
  return queue;
}

/**
 * The entries of the executor and the reconciler, written at synth: each imports the
 * user's modules by absolute path and hands them to the function's factory, so esbuild
 * bundles the user's code in and the function's own code names no action.
 */
class GeneratedEntries {
  readonly #dir: string;

  constructor(scope: Construct) {
    this.#dir = generatedEntriesOf(scope);
  }

  write(name: string, runtime: string, factory: string, modules: ReadonlyMap<string, string>): string {
    const names = [...modules.keys()].sort();
    const lines = [
      '// Generated by the WebhookReceiver construct at synth; do not edit.',
      `import { ${factory} } from ${JSON.stringify(runtime)};`,
      ...names.map((action, i) => `import * as m${i} from ${JSON.stringify(resolve(modules.get(action) ?? ''))};`),
      `export const handler = ${factory}({ ${names.map((action, i) => `${JSON.stringify(action)}: m${i}`).join(', ')} });`,
      '',
    ];
    mkdirSync(this.#dir, { recursive: true });
    const file = join(this.#dir, `${name}.mjs`);
    writeFileSync(file, lines.join('\n'));
    return file;
  }
}

/**
 * The folder of a receiver's generated entries (`executor.mjs`, `reconciler.mjs`): one per
 * receiver and per app output, so two synths never write each other's.
 */
export function generatedEntriesOf(receiver: Construct): string {
  const outdir = Stage.of(receiver)?.outdir ?? '';
  const digest = createHash('sha256').update(`${outdir}\u0000${receiver.node.path}`).digest('hex').slice(0, 16);
  return join(generatedEntriesDir(), digest);
}

/**
 * The SQS console page of a queue. The console takes the queue URL percent-encoded in
 * its fragment; a queue URL is known only at deploy time, and of its characters only
 * `:` and `/` need encoding, so CloudFormation does the encoding with split and join.
 */
function sqsConsoleUrl(stack: Stack, queueUrl: string): string {
  const encoded = Fn.join('%3A', Fn.split(':', Fn.join('%2F', Fn.split('/', queueUrl))));
  const region = stack.region;
  return `https://${region}.console.aws.amazon.com/sqs/v3/home?region=${region}#/queues/${encoded}`;
}
