import type { WorkMessage } from '../domain/event-record.ts';

/** Options of one send. */
export interface SendOptions {
  /** Gives the send up (the SDK's retries included) when aborted. @default - no limit */
  readonly signal?: AbortSignal;
  /**
   * Seconds before SQS lets a consumer receive the message, up to SQS_MAX_DELAY_SECONDS (900):
   * work that waits for its route's rate limit. @default 0
   */
  readonly delaySeconds?: number;
  /**
   * The sender wrote the message's body object itself at this instant (the ingest, just before its
   * claim): it is fresh, and S3 need not be asked (queue/fresh-body-work-queue.ts). @default - asked
   */
  readonly bodyWrittenAtMs?: number;
}

/**
 * The SQS queue between accepting and executing. A route with a queue of its own (ownQueue) has
 * its work sent there, whatever sends it (routed-work-queue.ts).
 */
export interface WorkQueue {
  send(message: WorkMessage, options?: SendOptions): Promise<void>;
}
