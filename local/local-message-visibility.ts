/**
 * The executor's "make this message visible again" on fauxqs. It asks for 1 s, not 0:
 * fauxqs 2.4.1 with a data folder loses a message whose visibility is changed to 0 (its
 * SQLite write of the "ready" state breaks a NOT NULL column after the message has left
 * memory). A dead-letter copy then reaches the DLQ one second per receive later; nothing else changes.
 */
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { MessageVisibility } from '../lambdas/ports/message-visibility.ts';

/** Seconds a "release" hides the message on fauxqs; 0 would lose it. */
export const FAUXQS_RELEASE_SECONDS = 1;

export class LocalMessageVisibility implements MessageVisibility {
  readonly #client: SQSClient;
  readonly #queueUrl: string;
  constructor(client: SQSClient, queueUrl: string) {
    this.#client = client;
    this.#queueUrl = queueUrl;
  }
  async release(receiptHandle: string): Promise<void> {
    await this.#client.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: this.#queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: FAUXQS_RELEASE_SECONDS }),
    );
  }
}
