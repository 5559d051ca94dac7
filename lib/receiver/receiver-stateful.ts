import { Annotations, Arn, ArnFormat, Duration, Stack, Token } from 'aws-cdk-lib';
import { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ConfigError } from '../../lambdas/config/resolve-config.ts';
import { longestTtlSeconds } from '../../lambdas/domain/body-object.ts';
import type { RegionalPlacement } from '../regional-placement.ts';
import { AlarmTopic } from '../stateful/alarm-topic.ts';
import { BodyBucket, bodyBucketName } from '../stateful/body-bucket.ts';
import { EventsTable } from '../stateful/events-table.ts';
import { RouteSecrets } from '../stateful/route-secrets.ts';
import { WorkQueue } from '../stateful/work-queue.ts';
import { readsReplicatedSecrets, secretNameOf } from './receiver-settings.ts';
import type { ReceiverSettings } from './receiver-settings.ts';

/** A receiver's stateful resources: what keeps the deliveries, their work and their secrets. */
export interface ReceiverState {
  readonly eventsTable: ITableV2;
  readonly work: WorkQueue;
  /** Every queue the functions send work to: the shared one first, then the routes' own. */
  readonly workQueues: readonly IQueue[];
  /** This Region's bucket of large bodies. */
  readonly bodyBucket: IBucket;
  /** This Region's bucket of bodies, then, with several Regions, every other Region's, by name. */
  readonly bodyBuckets: readonly IBucket[];
  readonly secrets: RouteSecrets;
  readonly alarms: AlarmTopic;
}

/** Makes (or, for another Region's, finds) the table, the queues, the body buckets, the route secrets and the alarm topic. */
export function makeReceiverState(receiver: Construct, settings: ReceiverSettings, existingEventsTable: string | undefined): ReceiverState {
  const { resolved, namePrefix, placement } = settings;
  const stack = Stack.of(receiver);
  const eventsTable = eventsTableOf(receiver, placement, existingEventsTable);
  const work = new WorkQueue(receiver, 'Work', {
    namePrefix,
    maxReceiveCount: resolved.queue.maxReceiveCount,
    visibilityTimeout: Duration.seconds(resolved.queue.visibilityTimeoutSeconds),
    consumerTimeout: Duration.seconds(resolved.executorTimeoutSeconds),
    ownQueueRoutes: resolved.routes.filter((r) => r.ownQueue).map((r) => r.name),
  });
  // Named by the prefix, the account and the Region, so that another Region's functions find it
  // by name: a record accepted here may be re-sent by another Region's reconciler onto that
  // Region's queue, and its executor then reads (and renews) the body here.
  const bodies = new BodyBucket(receiver, 'Bodies', {
    bucketName: bodyBucketName(namePrefix, stack.account, stack.region),
    longestTtlSeconds: longestTtlSeconds(resolved.routes),
  });
  // The other Regions' buckets, by the same rule: their stacks create them (no resource here).
  const otherBodyBuckets = (placement?.otherReplicas ?? []).map((region) =>
    Bucket.fromBucketName(receiver, `BodiesIn-${region}`, bodyBucketName(namePrefix, stack.account, region)),
  );
  const secrets = new RouteSecrets(receiver, 'Secrets', {
    routes: resolved.routes.map((r) => ({ route: r.name, secretName: secretNameOf(namePrefix, r), importSecret: r.importSecret || readsReplicatedSecrets(placement) })),
    ...(placement?.owner === true ? { replicaRegions: placement.otherReplicas } : {}),
    logRetentionDays: resolved.logRetentionDays,
    metricNamespace: namePrefix,
  });
  return {
    eventsTable,
    work,
    workQueues: [work.queue, ...work.routeQueues.values()],
    bodyBucket: bodies.bucket,
    bodyBuckets: [bodies.bucket, ...otherBodyBuckets],
    secrets,
    alarms: alarmTopicOf(receiver, namePrefix, resolved.alarmEmail),
  };
}

/** The topic every alarm notifies, with a warning at synth when nobody subscribes to it. */
function alarmTopicOf(receiver: Construct, namePrefix: string, email: string | undefined): AlarmTopic {
  const alarms = new AlarmTopic(receiver, 'Alarms', { namePrefix, ...(email === undefined ? {} : { email }) });
  if (email === undefined) {
    // Without a subscriber every alarm below notifies nobody; the deploy would look healthy.
    Annotations.of(alarms).addWarningV2(
      'retryproof:no-alarm-email',
      'no alarmEmail is set, so every alarm notifies a topic nobody subscribes to: ' +
        "set alarmEmail: 'you@example.com' (in retryproof.config.ts, or in the WebhookReceiver's props), or subscribe to the topic in the AlarmTopicArn output yourself",
    );
  }
  return alarms;
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
