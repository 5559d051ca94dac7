import { createHash } from 'node:crypto';
import { Annotations, ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import { Queue, QueueEncryption, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import type { IQueue, QueueProps, RedriveAllowPolicy } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DLQ_RETENTION_SECONDS, VISIBILITY_TO_TIMEOUT_FACTOR } from '../../lambdas/config/route-config.ts';

/** Props of {@link WorkQueue}. */
export interface WorkQueueProps {
  /** The receiver's name prefix; the queue is named `<prefix>-work`. */
  readonly namePrefix: string;
  /** Receives before SQS moves a message to the DLQ. */
  readonly maxReceiveCount: number;
  /** How long a received message stays hidden from other consumers. */
  readonly visibilityTimeout: Duration;
  /**
   * The timeout of the function that consumes the queue. The visibility timeout must be
   * at least 6x this, AWS's advice for Lambda event sources: a message must not reappear
   * while an invocation that holds it (and its retries inside the batch) can still run.
   */
  readonly consumerTimeout: Duration;
  /**
   * The routes whose work has a queue of its own (a route's `ownQueue`), each named
   * {@link routeQueueName}: the same settings as the shared queue, the same DLQ, the same
   * maxReceiveCount. @default - none: every route's work is on the shared queue
   */
  readonly ownQueueRoutes?: readonly string[];
}

/**
 * SQS's longest queue name: "A queue name can have up to 80 characters. Valid values:
 * alphanumeric characters, hyphens (-), and underscores (_)" (SQS API Reference, CreateQueue, QueueName).
 */
const SQS_QUEUE_NAME_MAX = 80;
/**
 * The most source queues a DLQ's redrive-allow policy can name with `byQueue` (SQS API Reference,
 * SetQueueAttributes, RedriveAllowPolicy: "You can specify up to 10 source queue ARNs. To allow
 * more than 10 source queues to specify dead-letter queues, set the redrivePermission parameter to allowAll").
 */
export const REDRIVE_ALLOW_MAX_SOURCES = 10;
/** Hex digits of the route name's SHA-256 that stand for a route name cut to fit the queue name. */
const NAME_DIGEST_LENGTH = 8;

/**
 * The physical name of a route's own queue: `<prefix>-work-<route>`. A route name is up to 63
 * characters and the prefix up to 40, so a name over SQS's 80 keeps the route's first
 * characters and appends 8 hex digits of its SHA-256: stable across synths, and distinct for
 * two routes that share their first characters.
 */
export function routeQueueName(namePrefix: string, route: string): string {
  const whole = `${namePrefix}-work-${route}`;
  if (whole.length <= SQS_QUEUE_NAME_MAX) return whole;
  const digest = createHash('sha256').update(route).digest('hex').slice(0, NAME_DIGEST_LENGTH);
  const room = SQS_QUEUE_NAME_MAX - `${namePrefix}-work-`.length - 1 - NAME_DIGEST_LENGTH;
  return `${namePrefix}-work-${route.slice(0, room)}-${digest}`;
}

/**
 * The queue between accepting and executing, the queues of routes that have their own, and
 * the one dead-letter queue behind all of them. The DLQ keeps messages for 14 days and allows
 * redrive from these queues only (up to 10; beyond that, from the account's queues of this
 * Region), so the console's "Start DLQ redrive" works: without a destination it returns each
 * message "back to their respective original source queues" (SQS API Reference,
 * StartMessageMoveTask, DestinationArn). All are encrypted (SQS-managed SSE) and refuse plain HTTP.
 */
export class WorkQueue extends Construct {
  /** The shared work queue: every route without a queue of its own. */
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  /** The queue of each route with its own, by route name; empty when no route has one. */
  readonly routeQueues: ReadonlyMap<string, IQueue>;

  constructor(scope: Construct, id: string, props: WorkQueueProps) {
    super(scope, id);
    const visibility = props.visibilityTimeout.toSeconds();
    const consumer = props.consumerTimeout.toSeconds();
    // resolveConfig already refuses this; the construct repeats the check so that no
    // other path (a test, a second stack, a later refactor) can build the unsafe pair.
    if (visibility < consumer * VISIBILITY_TO_TIMEOUT_FACTOR) {
      throw new Error(
        `visibility timeout ${visibility} s is under ${VISIBILITY_TO_TIMEOUT_FACTOR}x the consumer's timeout ` +
          `of ${consumer} s (minimum ${consumer * VISIBILITY_TO_TIMEOUT_FACTOR} s)`,
      );
    }
    if (!Number.isInteger(props.maxReceiveCount) || props.maxReceiveCount < 1 || props.maxReceiveCount > 1000) {
      throw new Error(`max receive count ${props.maxReceiveCount} is not a whole number from 1 to 1000`);
    }

    // Each work queue names the DLQ in its redrive policy, and the DLQ names the queues in its
    // redrive-allow policy. ARN references both ways would be a cycle in CloudFormation, so the
    // work queues get fixed names (unique: the receiver's name prefix is unique per account and
    // region) and the DLQ takes the ARNs built from those names, which reference no resource.
    const stack = Stack.of(this);
    const queueName = `${props.namePrefix}-work`;
    if (queueName.length > SQS_QUEUE_NAME_MAX) {
      throw new Error(`queue name ${queueName} is longer than the ${SQS_QUEUE_NAME_MAX} characters sqs allows; use a shorter namePrefix`);
    }
    const routes = props.ownQueueRoutes ?? [];
    const names = new Map(routes.map((route) => [route, routeQueueName(props.namePrefix, route)]));
    const taken = new Map<string, string>([[queueName, 'the shared work queue']]);
    for (const [route, name] of names) {
      const other = taken.get(name);
      if (other !== undefined) throw new Error(`route "${route}"'s queue name ${name} is already ${other}'s; rename the route`);
      taken.set(name, `route "${route}"`);
    }
    const arnOf = (name: string): string => stack.formatArn({ service: 'sqs', resource: name, arnFormat: ArnFormat.NO_RESOURCE_NAME });
    // The construct ids of these imports name no resource; the shared queue's keeps its id of old.
    const sources = [
      Queue.fromQueueArn(this, 'QueueByName', arnOf(queueName)),
      ...[...names].map(([route, name]) => Queue.fromQueueArn(this, `RouteQueueByName-${route}`, arnOf(name))),
    ];
    const dlq = new Queue(this, 'DeadLetterQueue', {
      retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      redriveAllowPolicy: redriveAllowPolicyOf(this, sources),
    });
    // The one definition of a work queue, shared and own alike: only the name differs.
    const workQueueProps = (name: string): QueueProps => ({
      queueName: name,
      visibilityTimeout: props.visibilityTimeout,
      // The longest SQS allows, as the DLQ's: the work message carries the payload, which the
      // table keeps only on the paths that may need it again, so a message must outlast a long
      // executor outage (the queue-age alarm fires within the hour).
      retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: dlq, maxReceiveCount: props.maxReceiveCount },
    });
    this.queue = new Queue(this, 'Queue', workQueueProps(queueName));
    // Construct ids from the route name: stable as long as the route keeps its name, whatever
    // other routes come and go (an index would renumber them, and replace their queues).
    this.routeQueues = new Map([...names].map(([route, name]) => [route, new Queue(this, `RouteQueue-${route}`, workQueueProps(name))]));
    this.deadLetterQueue = dlq;
  }
}

/**
 * The DLQ's redrive-allow policy: `byQueue` naming every work queue while there are at most
 * {@link REDRIVE_ALLOW_MAX_SOURCES} (the shared one and up to 9 routes' own), the narrowest
 * SQS offers. Beyond that `byQueue` cannot list them all, and SQS's own answer is `allowAll`:
 * "Any source queues in this AWS account in the same Region can specify this queue as the
 * dead-letter queue" (SQS API Reference, RedriveAllowPolicy). That admits no other account
 * and reads nothing; the DLQ's access is still its queue policy's. Refusing the 11th isolated
 * route instead would cap isolation for a setting that grants nobody anything.
 */
function redriveAllowPolicyOf(scope: Construct, sources: readonly IQueue[]): RedriveAllowPolicy {
  if (sources.length <= REDRIVE_ALLOW_MAX_SOURCES) return { redrivePermission: RedrivePermission.BY_QUEUE, sourceQueues: [...sources] };
  Annotations.of(scope).addInfo(
    `the DLQ has ${sources.length} source queues, more than the ${REDRIVE_ALLOW_MAX_SOURCES} a byQueue redrive-allow policy can name: ` +
      'it allows any queue of this account and Region to use it as a dead-letter queue (allowAll)',
  );
  return { redrivePermission: RedrivePermission.ALLOW_ALL };
}
