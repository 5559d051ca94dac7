import { Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { TableGrants } from 'aws-cdk-lib/aws-dynamodb';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ResolvedConfig } from '../lambdas/config/resolve-config.ts';
import { LEDGER_TABLE } from '../lambdas/store/table-schema.ts';
import type { RegionalPlacement } from './regional-placement.ts';
import { grantReceiverFunctions } from './receiver/receiver-grants.ts';
import { makeReceiverFunctions, makeReceiverTriggers } from './receiver/receiver-functions.ts';
import { grantOperate } from './receiver/receiver-operate.ts';
import { watchReceiver } from './receiver/receiver-observability.ts';
import { writeReceiverOutputs } from './receiver/receiver-outputs.ts';
import { receiverSettings } from './receiver/receiver-settings.ts';
import { makeReceiverState } from './receiver/receiver-stateful.ts';
import { grantKeepBodies, grantReadBodyObjects } from './stateful/body-bucket.ts';
import type { RetryproofFunction } from './stateless/retryproof-function.ts';

export { generatedEntriesOf } from './receiver/generated-entries.ts';

import type { WebhookReceiverProps } from './receiver/receiver-props.ts';

export type { WebhookReceiverProps } from './receiver/receiver-props.ts';

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
   * a while after the longest TTL. Its name is fixed, bodyBucketName in lib/stateful/body-bucket.ts.
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
    const settings = receiverSettings(this, id, props);
    this.config = settings.resolved;
    this.namePrefix = settings.namePrefix;
    this.placement = settings.placement;
    const state = makeReceiverState(this, settings, props.existingEventsTable);
    const functions = makeReceiverFunctions(this, settings, state);
    grantReceiverFunctions(this, settings, state, functions, props.secretsKey);
    const triggers = makeReceiverTriggers(this, settings, functions);
    const observability = watchReceiver(this, settings, state, functions, triggers);
    writeReceiverOutputs(this, { settings, state, functions, api: triggers.api, ledgerTableName: () => this.#ledgerTableName });
    this.#refuseSharedNamePrefix();

    this.api = triggers.api.api;
    this.url = triggers.api.webhookBaseUrl;
    this.table = state.eventsTable;
    this.queue = state.work.queue;
    this.routeQueues = state.work.routeQueues;
    this.deadLetterQueue = state.work.deadLetterQueue;
    this.bodyBucket = state.bodyBucket;
    this.#bodyBuckets = state.bodyBuckets;
    this.ingestFunction = functions.ingest;
    this.executorFunction = functions.executor;
    this.reconcilerFunction = functions.reconciler;
    this.dashboard = observability.dashboard;
    this.alarmTopic = state.alarms.topic;
    this.routeSecrets = state.secrets.byRoute;
  }

  /** Two receivers of one stack with one prefix would share physical names, and metrics. */
  #refuseSharedNamePrefix(): void {
    const namePrefix = this.namePrefix;
    this.node.addValidation({
      validate: () =>
        Stack.of(this)
          .node.findAll()
          .filter((c): c is WebhookReceiver => c instanceof WebhookReceiver && c !== this && c.namePrefix === namePrefix)
          .map((other) => `the receivers ${this.node.path} and ${other.node.path} both have the name prefix "${namePrefix}": their resources' names and metrics would collide; set namePrefix on one`),
    });
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

  /**
   * Lets a person run `retryproof console` against this receiver: exactly the actions it calls,
   * on the resources it calls them on (docs/console.md, "The IAM actions it needs"). It reads
   * records and, on request, bodies (customer data), and it changes state: redrive, pause, resume,
   * skip, the DLQ's redrive. The demo ledger's reads are included when {@link describeLedgerTable}
   * named it before this call.
   */
  grantOperate(grantee: IGrantable): void {
    grantOperate(Stack.of(this), {
      table: this.table,
      queues: [this.queue, ...this.routeQueues.values()],
      deadLetterQueue: this.deadLetterQueue,
      bodyBuckets: this.#bodyBuckets,
      ...(this.#ledgerTableName === undefined ? {} : { ledgerTableName: this.#ledgerTableName }),
    }, grantee);
  }
}
