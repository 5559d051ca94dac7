import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { MessageVisibility } from '../ports/message-visibility.ts';

/** The queue's name: the last part of its URL (`…/123456789012/name`) or of its ARN (`arn:aws:sqs:…:name`). */
export function queueNameOf(urlOrArn: string): string {
  const cut = Math.max(urlOrArn.lastIndexOf('/'), urlOrArn.lastIndexOf(':'));
  return urlOrArn.slice(cut + 1);
}

/**
 * ChangeMessageVisibility on the queue the message came from: a dead-letter copy is handed back
 * at once, a message that finds a live lease comes back just when the lease ends. A receipt
 * handle is only valid on its own queue, so with several work queues (routes with a queue of
 * their own) the event record's source ARN picks the URL.
 */
export class SqsMessageVisibility implements MessageVisibility {
  readonly #client: SQSClient;
  readonly #shared: string;
  readonly #byName: ReadonlyMap<string, string>;
  readonly #minSeconds: number;
  /**
   * @param queueUrls the shared work queue's URL first, then any other the messages may come from
   * @param minSeconds the shortest hiding this queue is asked for. @default 0
   */
  constructor(client: SQSClient, queueUrls: string | readonly string[], minSeconds = 0) {
    const urls = typeof queueUrls === 'string' ? [queueUrls] : queueUrls;
    if (urls[0] === undefined) throw new Error('SqsMessageVisibility needs at least one queue URL');
    this.#client = client;
    this.#shared = urls[0];
    this.#byName = new Map(urls.map((url) => [queueNameOf(url), url]));
    this.#minSeconds = minSeconds;
  }
  async changeVisibility(receiptHandle: string, seconds: number, source?: string): Promise<void> {
    // SQS takes whole seconds up to 12 hours.
    const visibility = Math.min(43_200, Math.max(this.#minSeconds, Math.ceil(seconds)));
    const queueUrl = (source === undefined ? undefined : this.#byName.get(queueNameOf(source))) ?? this.#shared;
    await this.#client.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: visibility }));
  }
}
