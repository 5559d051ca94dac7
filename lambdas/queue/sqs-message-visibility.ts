import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { MessageVisibility } from '../ports/message-visibility.ts';

/** ChangeMessageVisibility to 0 on the work queue: a dead-letter copy reaches the DLQ in seconds. */
export class SqsMessageVisibility implements MessageVisibility {
  readonly #client: SQSClient;
  readonly #queueUrl: string;
  readonly #seconds: number;
  /** @param seconds how long a released message stays hidden. @default 0 */
  constructor(client: SQSClient, queueUrl: string, seconds = 0) {
    this.#client = client;
    this.#queueUrl = queueUrl;
    this.#seconds = seconds;
  }
  async release(receiptHandle: string): Promise<void> {
    await this.#client.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: this.#queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: this.#seconds }),
    );
  }
}
