import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SQS_MAX_DELAY_SECONDS } from '../config/route-config.ts';
import type { WorkMessage } from '../domain/event-record.ts';
import type { SendOptions, WorkQueue } from '../ports/work-queue.ts';

/** The work queue on SQS. Message attributes make a DLQ message readable at a glance in the console. */
export class SqsWorkQueue implements WorkQueue {
  readonly #client: SQSClient;
  readonly #queueUrl: string;

  constructor(client: SQSClient, queueUrl: string) {
    this.#client = client;
    this.#queueUrl = queueUrl;
  }

  async send(message: WorkMessage, options: SendOptions = {}): Promise<void> {
    await this.#client.send(
      new SendMessageCommand({
        QueueUrl: this.#queueUrl,
        MessageBody: JSON.stringify(message),
        ...(options.delaySeconds === undefined || options.delaySeconds <= 0
          ? {}
          : { DelaySeconds: Math.min(SQS_MAX_DELAY_SECONDS, Math.ceil(options.delaySeconds)) }),
        MessageAttributes: {
          route: { DataType: 'String', StringValue: message.route },
          key: { DataType: 'String', StringValue: message.key },
          ...(message.reason === undefined ? {} : { reason: { DataType: 'String', StringValue: message.reason } }),
        },
      }),
      options.signal === undefined ? {} : { abortSignal: options.signal },
    );
  }
}
