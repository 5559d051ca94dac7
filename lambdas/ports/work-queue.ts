import type { WorkMessage } from '../domain/event-record.ts';

/** The SQS queue between accepting and executing. */
export interface WorkQueue {
  send(message: WorkMessage): Promise<void>;
}
