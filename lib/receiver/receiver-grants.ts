import { Duration, Validations } from 'aws-cdk-lib';
import { TableGrants } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { BucketGrants } from 'aws-cdk-lib/aws-s3';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { needsReplayMemory } from '../../lambdas/domain/idempotency-key.ts';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';
import { defaultPolicyOf, nagResource } from '../nag.ts';
import { BODY_OBJECTS_KEY_PATTERN, grantKeepBodies } from '../stateful/body-bucket.ts';
import type { WorkQueue } from '../stateful/work-queue.ts';
import type { RetryproofFunction } from '../stateless/retryproof-function.ts';
import { routeConcurrency } from './receiver-functions.ts';
import type { ReceiverFunctions } from './receiver-functions.ts';
import { readsReplicatedSecrets } from './receiver-settings.ts';
import type { ReceiverSettings } from './receiver-settings.ts';
import type { ReceiverState } from './receiver-stateful.ts';

/** What the grants of each function read. */
interface GrantContext {
  readonly receiver: Construct;
  readonly settings: ReceiverSettings;
  readonly state: ReceiverState;
  /** Item actions on the events table alone, never on its indexes. */
  readonly eventItems: TableGrants;
  /** Whether a route is ordered per entity (orderBy): its lines are read with Query on the table. */
  readonly ordered: boolean;
}

/**
 * Least privilege: each grant names the exact actions its function calls, on the exact
 * resources: item actions on the table alone (TableV2.grant() adds index/* too, as grants
 * do for any table with indexes unless told otherwise), Query on the indexes read.
 * test/cdk/least-privilege.test.ts derives each function's list from the calls its code makes.
 * The executor's event sources come with its grants: each grants the polling calls on its queue.
 */
export function grantReceiverFunctions(
  receiver: Construct,
  settings: ReceiverSettings,
  state: ReceiverState,
  functions: ReceiverFunctions,
  secretsKey: IKey | undefined,
): void {
  const context: GrantContext = {
    receiver,
    settings,
    state,
    eventItems: new TableGrants({ table: state.eventsTable, hasIndex: false }),
    // A route ordered per entity (orderBy): its lines live on the table (store/dynamodb-entity-order.ts),
    // read with Query on the table itself (an entity's places) by the ingest that places a record,
    // the executor that looks for its turn, and the reconciler that checks a waiting record's.
    ordered: settings.resolved.routes.some((r) => r.orderBy !== undefined),
  };
  grantIngest(context, functions.ingest, secretsKey);
  grantExecutor(context, functions.executor);
  grantReconciler(context, functions.reconciler);
}

function grantIngest(context: GrantContext, ingest: RetryproofFunction, secretsKey: IKey | undefined): void {
  const { receiver, settings, state, eventItems } = context;
  const { resolved } = settings;
  // Claim and duplicate count, resend and breaker mark (UpdateItem), a new generation over an
  // expired record and the breaker's pause (PutItem), and the route's state when a key trips
  // a route paused already (GetItem).
  eventItems.actions(ingest, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
  if (context.ordered) eventItems.actions(ingest, 'dynamodb:Query');
  // A route whose scheme signs no timestamp remembers each body (the replay memory, an
  // UpdateItem); a capture replayed after its record expired takes back the generation it
  // just claimed (forgetReplay, a conditional DeleteItem). Only such routes need to delete.
  if (resolved.routes.some((r) => needsReplayMemory(r.signature.scheme))) eventItems.actions(ingest, 'dynamodb:DeleteItem');
  // Each new delivery goes to its route's queue (lambdas/queue/routed-work-queue.ts).
  for (const queue of state.workQueues) queue.grant(ingest, 'sqs:SendMessage');
  for (const route of resolved.routes) {
    const secret = state.secrets.byRoute.get(route.name);
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
      : readsReplicatedSecrets(settings.placement)
        ? `reads the replica of its secret, made by the ${resolved.regions?.replicas[0] ?? ''} stack,`
        : 'reads the secret the receiver ensures exists';
    Validations.of(defaultPolicyOf(ingest.serviceRole)).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(receiver, secret.secretArn)}-??????]`,
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
  BucketGrants.fromBucket(state.bodyBucket).actionsOnObjectKeys(ingest, BODY_OBJECTS_KEY_PATTERN, 's3:GetObject', 's3:PutObject');
  acknowledgeBodyObjects(receiver, ingest, [state.bodyBucket]);
}

function grantExecutor(context: GrantContext, executor: RetryproofFunction): void {
  const { receiver, settings, state, eventItems } = context;
  const { resolved } = settings;
  // Route state, read also right after parking (GetItem), claim, parking and fenced writes
  // (UpdateItem), the execution log (PutItem). No transaction: MRSC refuses them.
  eventItems.actions(executor, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
  if (context.ordered) eventItems.actions(executor, 'dynamodb:Query');
  // Dead-letter copies go to the route's WORK queue and reach the DLQ through its redrive
  // policy, so that every DLQ message has a source queue and the console's "redrive to source"
  // works; a rate-limited route's deferred wake-ups (DelaySeconds) go to its queue too.
  // The executor cannot write to the DLQ at all.
  for (const queue of state.workQueues) queue.grant(executor, 'sqs:SendMessage');
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
  executor.addEventSource(eventSourceOf(state.work.queue, resolved.queue.maxConcurrency));
  for (const route of resolved.routes.filter((r) => r.ownQueue)) {
    executor.addEventSource(eventSourceOf(routeQueueOf(state.work, route.name), routeConcurrency(route, resolved)));
  }
  // A message's body, read back from the bucket its pointer names: this Region's, or, with
  // several Regions, the one of the Region that accepted it. Reading alone would run the work,
  // but the executor also renews an old object before any message of its own points to it (a
  // copy onto itself), which S3 authorises as PutObject on the copy (grantKeepBodies).
  for (const bucket of state.bodyBuckets) grantKeepBodies(bucket, executor);
  acknowledgeBodyObjects(receiver, executor, state.bodyBuckets);
}

function grantReconciler(context: GrantContext, reconciler: RetryproofFunction): void {
  const { receiver, settings, state, eventItems } = context;
  // Route state and a record to re-send (GetItem), the window's open records, read whole
  // (BatchGetItem), the correction log (PutItem), resends, unparking and the retry partition
  // (UpdateItem); the window on byTime, parked and stranded records on parked (Query on
  // those two indexes, never on the table).
  eventItems.actions(reconciler, 'dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
  Grant.addToPrincipal({
    grantee: reconciler,
    actions: ['dynamodb:Query'],
    resourceArns: [EVENTS_TABLE.byTimeIndex.name, EVENTS_TABLE.parkedIndex.name].map((index) => `${state.eventsTable.tableArn}/index/${index}`),
  });
  for (const queue of state.workQueues) queue.grant(reconciler, 'sqs:SendMessage');
  // Several Regions: an MRSC table has no TTL, so the reconciler sweeps expired items
  // (expiry-sweep.ts): a record's partition and its key chunks (Query on the table), one
  // conditional DeleteItem each.
  if (settings.resolved.regions !== undefined) eventItems.actions(reconciler, 'dynamodb:Query', 'dynamodb:DeleteItem');
  else if (context.ordered) eventItems.actions(reconciler, 'dynamodb:Query');
  // A re-send keeps the body it points to alive (HeadObject, and a copy onto itself when old),
  // and a parked record kept a TTL more has its body renewed first: in any Region's bucket, since
  // the reconciler re-sends every open record of the one table (grantKeepBodies).
  for (const bucket of state.bodyBuckets) grantKeepBodies(bucket, reconciler);
  acknowledgeBodyObjects(receiver, reconciler, state.bodyBuckets);
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

function routeQueueOf(work: WorkQueue, route: string): IQueue {
  const queue = work.routeQueues.get(route);
  if (queue === undefined) throw new Error(`route ${route} has no queue of its own`);
  return queue;
}

