/**
 * How the demo's `crashAfterEffect` dies: as a real worker dies, with no word to anyone.
 * Demo only; the executor knows nothing of it.
 *
 * In Lambda the process exits, so the invocation fails, nothing more is written and the
 * batch's messages come back after their visibility timeout. Under the local stack and the
 * tests, whose event source (local/sqs-event-source.ts) runs the executor in this very
 * process, exiting would end everything: that event source registers a runtime under
 * {@link LOCAL_LAMBDA_RUNTIME}, whose `die()` ends only the current invocation the same way.
 */

/** Where a local stand-in for the Lambda runtime registers itself on `globalThis`. */
export const LOCAL_LAMBDA_RUNTIME = Symbol.for('retryproof.local-lambda-runtime');

/** A local stand-in for the Lambda runtime. */
export interface LocalLambdaRuntime {
  /** Ends the current invocation as a crash would: the promise never settles. */
  die(): Promise<never>;
}

/** Dies now, as the worker's process would. Never returns. */
export function dieAsWorker(): Promise<never> {
  const runtime = (globalThis as Record<symbol, LocalLambdaRuntime | undefined>)[LOCAL_LAMBDA_RUNTIME];
  if (runtime !== undefined) return runtime.die();
  process.exit(1);
}
