/** Changes when a received message is seen again, instead of waiting out the queue's visibility timeout. */
export interface MessageVisibility {
  /** Hides the message for `seconds` from now; 0 makes it visible again at once. */
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
}
