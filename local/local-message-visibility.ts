/**
 * The executor's "make this message visible again" on fauxqs asks for 1 s, not 0:
 * fauxqs 2.4.1 with a data folder loses a message whose visibility is changed to 0 (its
 * SQLite write of the "ready" state breaks a NOT NULL column after the message has left
 * memory). A dead-letter copy then reaches the DLQ one second per receive later; nothing else changes.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SqsMessageVisibility } from '../lambdas/queue/sqs-message-visibility.ts';

/** Seconds a "release" hides the message on fauxqs; 0 would lose it. */
export const FAUXQS_RELEASE_SECONDS = 1;

/**
 * SqsMessageVisibility with fauxqs' safe minimum.
 * @param queueUrls the Region's work queue, or it first and then its routes' own queues: the
 *   message's source queue (its record's eventSourceARN) picks the one asked, as deployed
 */
export function localMessageVisibility(client: SQSClient, queueUrls: string | readonly string[]): SqsMessageVisibility {
  return new SqsMessageVisibility(client, queueUrls, FAUXQS_RELEASE_SECONDS);
}
