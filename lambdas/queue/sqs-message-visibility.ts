import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { MessageVisibility } from '../ports/message-visibility.ts';

/**
 * ChangeMessageVisibility on the work queue: a dead-letter copy is handed back at once, a
 * message that finds a live lease comes back just when the lease ends.
 */
export class SqsMessageVisibility implements MessageVisibility {
  readonly #client: SQSClient;
  readonly #queueUrl: string;
  readonly #minSeconds: number;
  /** @param minSeconds the shortest hiding this queue is asked for. @default 0 */
  constructor(client: SQSClient, queueUrl: string, minSeconds = 0) {
    this.#client = client;
    this.#queueUrl = queueUrl;
    this.#minSeconds = minSeconds;
  }
  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    // SQS takes whole seconds up to 12 hours.
    const visibility = Math.min(43_200, Math.max(this.#minSeconds, Math.ceil(seconds)));
    await this.#client.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: this.#queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: visibility }),
    );
  }
}
