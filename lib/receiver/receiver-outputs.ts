import { CfnOutput, Fn, Lazy, Stack } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { RECEIVER_DESCRIPTOR_VERSION, RECEIVER_OUTPUT_DESCRIPTION, RECEIVER_OUTPUT_ID } from '../../lambdas/config/receiver-descriptor.ts';
import type { ReceiverDescriptor } from '../../lambdas/config/receiver-descriptor.ts';
import type { WebhookApi } from '../stateless/webhook-api.ts';
import type { ReceiverFunctions } from './receiver-functions.ts';
import type { ReceiverSettings } from './receiver-settings.ts';
import type { ReceiverState } from './receiver-stateful.ts';

/** What the outputs name: the receiver's parts, and the ledger table once the app names one. */
export interface OutputSources {
  readonly settings: ReceiverSettings;
  readonly state: ReceiverState;
  readonly functions: ReceiverFunctions;
  readonly api: WebhookApi;
  /** The ledger table the descriptor names, read at synth: describeLedgerTable may come after the constructor. */
  readonly ledgerTableName: () => string | undefined;
}

/** Writes the stack outputs an operator and the CLI read: the URLs, the topic, the descriptor and, with several Regions, where this one stands. */
export function writeReceiverOutputs(receiver: Construct, sources: OutputSources): void {
  const { state, api } = sources;
  const { work } = state;
  new CfnOutput(receiver, 'ApiUrl', {
    description: 'Webhook base URL: give each sender this URL followed by its route name',
    value: api.webhookBaseUrl,
  });
  new CfnOutput(receiver, 'QueueUrl', { description: 'The work queue', value: work.queue.queueUrl });
  new CfnOutput(receiver, 'DlqUrl', { description: 'The dead-letter queue', value: work.deadLetterQueue.queueUrl });
  new CfnOutput(receiver, 'AlarmTopicArn', {
    description: 'The SNS topic every alarm notifies: subscribe to it, or set alarmEmail',
    value: state.alarms.topic.topicArn,
  });
  new CfnOutput(receiver, 'DlqConsoleUrl', {
    description: 'The DLQ in the SQS console, where "Start DLQ redrive" sends messages back',
    value: sqsConsoleUrl(Stack.of(receiver), work.deadLetterQueue.queueUrl),
  });
  // The operator CLI finds this receiver by this output's value, whatever its id or stack
  // (receiver-descriptor.ts); the configuration it reads is the reconciler's metadata.
  new CfnOutput(receiver, RECEIVER_OUTPUT_ID, {
    description: `${RECEIVER_OUTPUT_DESCRIPTION} (${receiver.node.path})`,
    value: Lazy.string({ produce: () => Stack.of(receiver).toJsonString(receiverDescriptor(receiver, sources)) }),
  });
  const { placement } = sources.settings;
  if (placement !== undefined) {
    new CfnOutput(receiver, 'Region', { description: "This receiver's Region, one of the global table's replicas", value: placement.region });
    new CfnOutput(receiver, 'EventsTableName', { description: 'The global events table, the same in every Region', value: placement.tableName });
  }
}

/** The receiver's descriptor, as the CLI reads it from its output (receiver-descriptor.ts). */
function receiverDescriptor(receiver: Construct, sources: OutputSources): ReceiverDescriptor {
  const { state, api, functions } = sources;
  const { work } = state;
  const stack = Stack.of(receiver);
  const ledgerTable = sources.ledgerTableName();
  return {
    retryproof: RECEIVER_DESCRIPTOR_VERSION,
    receiver: receiver.node.path.slice(stack.node.path.length + 1),
    namePrefix: sources.settings.namePrefix,
    region: stack.region,
    apiUrl: api.webhookBaseUrl,
    queueUrl: work.queue.queueUrl,
    ...(work.routeQueues.size === 0 ? {} : { routeQueueUrls: mapRecord(work.routeQueues, (q: IQueue) => q.queueUrl) }),
    dlqUrl: work.deadLetterQueue.queueUrl,
    eventsTable: state.eventsTable.tableName,
    bodyBucket: state.bodyBucket.bucketName,
    ...(ledgerTable === undefined ? {} : { ledgerTable }),
    configResource: stack.getLogicalId(functions.reconciler.node.defaultChild as CfnElement),
  };
}

function mapRecord<V, W>(map: ReadonlyMap<string, V>, fn: (value: V) => W): Record<string, W> {
  return Object.fromEntries([...map].map(([key, value]) => [key, fn(value)]));
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
