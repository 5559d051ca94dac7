import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import { Queue, QueueEncryption, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
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
}

/**
 * The queue between accepting and executing, and its dead-letter queue. The DLQ keeps
 * messages for 14 days and allows redrive back to the queue only, so the console's
 * "Start DLQ redrive" works. Both are encrypted (SQS-managed SSE) and refuse plain HTTP.
 */
export class WorkQueue extends Construct {
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;

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

    // The queue names its DLQ in its redrive policy, and the DLQ names the queue in its
    // redrive-allow policy. Two ARN references would be a cycle in CloudFormation, so the
    // queue gets a fixed name (unique: the receiver's name prefix is unique per account and region) and
    // the DLQ takes the ARN built from that name, which references no resource.
    const stack = Stack.of(this);
    const queueName = `${props.namePrefix}-work`;
    if (queueName.length > 80) {
      throw new Error(`queue name ${queueName} is longer than the 80 characters sqs allows; use a shorter namePrefix`);
    }
    const queueArn = stack.formatArn({ service: 'sqs', resource: queueName, arnFormat: ArnFormat.NO_RESOURCE_NAME });
    const dlq = new Queue(this, 'DeadLetterQueue', {
      retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      redriveAllowPolicy: {
        redrivePermission: RedrivePermission.BY_QUEUE,
        sourceQueues: [Queue.fromQueueArn(this, 'QueueByName', queueArn)],
      },
    });
    const queue = new Queue(this, 'Queue', {
      queueName,
      visibilityTimeout: props.visibilityTimeout,
      // The longest SQS allows, as the DLQ's: the work message carries the payload, which the
      // table keeps only on the paths that may need it again, so a message must outlast a long
      // executor outage (the queue-age alarm fires within the hour).
      retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: dlq, maxReceiveCount: props.maxReceiveCount },
    });
    this.queue = queue;
    this.deadLetterQueue = dlq;
  }
}
