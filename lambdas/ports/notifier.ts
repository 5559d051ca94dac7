/** Where operator notices go: the stack's SNS alarm topic, or the console locally. */
export interface Notifier {
  notify(subject: string, message: Readonly<Record<string, unknown>>): Promise<void>;
}
