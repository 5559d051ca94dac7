import type { WorkMessage } from '../domain/event-record.ts';

/** Options of one send. */
export interface SendOptions {
  /** Gives the send up (the SDK's retries included) when aborted. @default - no limit */
  readonly signal?: AbortSignal;
}

/** The SQS queue between accepting and executing. */
export interface WorkQueue {
  send(message: WorkMessage, options?: SendOptions): Promise<void>;
}
