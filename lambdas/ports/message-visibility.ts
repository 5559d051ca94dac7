/** Makes a received message visible again at once, instead of after the visibility timeout. */
export interface MessageVisibility {
  release(receiptHandle: string): Promise<void>;
}
