/**
 * Behaves as Lambda's SQS event source does, on any SQS endpoint (fauxqs locally):
 * receive a batch, hand it to the handler as a real SQSEvent, delete what succeeded,
 * leave the batch item failures to come back after the visibility timeout. The queue's
 * own redrive policy moves a message to the DLQ after maxReceiveCount receives.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { invoke } from './lambda-runtime.ts';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface EventSourceOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn?: string;
  readonly batchSize?: number;
  readonly context: () => Context;
  /**
   * Aborted: the event source "dies" with its invocations in flight. A batch that ends
   * after that deletes nothing, so its messages come back after the visibility timeout,
   * as when a Lambda is killed before the event source could delete them.
   */
  readonly signal?: AbortSignal;
  /**
   * Called as a batch is handed to the handler, with its size and context; the function
   * it returns is called when the handler is done. @default - nothing is told
   */
  readonly onInvoke?: (messages: number, context: Context) => () => void;
}

/** Builds the SQSRecord Lambda would hand over for a received message. */
export function sqsRecordOf(message: Message, queueArn: string): SQSRecord {
  const attrs = message.Attributes ?? {};
  const messageAttributes: SQSRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? 'String',
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
    };
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? '1',
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: 'us-east-1',
  };
}

export interface PollResult {
  readonly received: number;
  readonly deleted: number;
  readonly handedBack: number;
}

/** One receive-invoke-delete round. */
export async function pollOnce(handler: SqsHandler, options: EventSourceOptions): Promise<PollResult> {
  const out = await options.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: options.queueUrl,
      MaxNumberOfMessages: options.batchSize ?? 10,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  const messages = out.Messages ?? [];
  if (messages.length === 0) return { received: 0, deleted: 0, handedBack: 0 };
  const arn = options.queueArn ?? `arn:aws:sqs:us-east-1:000000000000:${options.queueUrl.split('/').pop() ?? ''}`;
  const event: SQSEvent = { Records: messages.map((m) => sqsRecordOf(m, arn)) };
  let failed: Set<string>;
  const context = options.context();
  const done = options.onInvoke?.(messages.length, context);
  try {
    const outcome = await invoke(() => handler(event, context));
    // A worker that died (lambda-runtime.ts) fails its whole batch, as a crashed Lambda does.
    failed = outcome.died ? new Set(messages.map((m) => m.MessageId ?? '')) : new Set(outcome.value.batchItemFailures.map((f) => f.itemIdentifier));
  } catch {
    // A thrown invocation fails the whole batch, as in Lambda.
    failed = new Set(messages.map((m) => m.MessageId ?? ''));
  } finally {
    done?.();
  }
  if (options.signal?.aborted === true) return { received: messages.length, deleted: 0, handedBack: messages.length };
  const succeeded = messages.filter((m) => !failed.has(m.MessageId ?? ''));
  if (succeeded.length > 0) {
    await options.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: succeeded.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
  }
  return { received: messages.length, deleted: succeeded.length, handedBack: messages.length - succeeded.length };
}
