/** Changes when a received message is seen again, instead of waiting out the queue's visibility timeout. */
export interface MessageVisibility {
  /**
   * Hides the message for `seconds` from now; 0 makes it visible again at once.
   * @param source the ARN of the queue the message came from (the SQS event record's
   *   eventSourceARN). @default - the shared work queue
   */
  changeVisibility(receiptHandle: string, seconds: number, source?: string): Promise<void>;
}
