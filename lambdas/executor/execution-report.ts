/** What the executor answers for one message: an outcome, and whether SQS may forget the message. */
export const EXECUTION_OUTCOME = {
  completed: 'completed',
  duplicate: 'duplicate',
  locked: 'locked',
  retry: 'retryable-error',
  permanent: 'permanent-error',
  exhausted: 'retries-exhausted',
  fencedOut: 'fenced-out',
  /** FAILED is terminal until a person redrives it: a stray message is dropped. */
  failedAlready: 'failed-already',
  expired: 'record-expired',
  unreadable: 'unreadable-message',
  /** The body is not the one the record was accepted with: nothing runs, a copy goes to people. */
  forged: 'forged-body',
  /** The message points to a body object that is not there: nothing runs, a copy goes to people. */
  bodyMissing: 'body-missing',
  parked: 'parked',
  /** Over the route's rate limit: a delayed wake-up message was sent, the record waits RECEIVED. */
  rateLimited: 'rate-limited',
  /** Earlier work of its entity is not done: parked in the line, woken at its turn. */
  waitingTurn: 'waiting-turn',
  toDeadLetterQueue: 'to-dead-letter-queue',
} as const;
export type ExecutionOutcome = (typeof EXECUTION_OUTCOME)[keyof typeof EXECUTION_OUTCOME];

export interface ExecutionReport {
  readonly outcome: ExecutionOutcome;
  /** False: hand the message back to SQS (a batch item failure). */
  readonly ack: boolean;
  /**
   * With ack false: hide the message this many seconds instead of the queue's visibility
   * timeout (0 for a dead-letter copy on its way to the DLQ; the lease's remaining time
   * for a message that found a live lease).
   */
  readonly visibilitySeconds?: number;
  readonly route?: string;
  readonly key?: string;
  readonly attempt?: number;
  /** Set when the message went to the DLQ. */
  readonly deadLetterReason?: string;
  readonly error?: string;
  /** How long the action ran, as a share of its record's lease (0..1+). */
  readonly leaseShare?: number;
}
