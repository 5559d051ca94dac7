/**
 * A local stand-in for the part of the Lambda runtime the demo's crashes need: an
 * invocation can die. In Lambda a dying worker's process exits and its invocation fails
 * with nothing more written; here the executor runs inside this process, so `die()` ends
 * only the current invocation: its promise is abandoned (never settled, so the code that
 * called `die()` writes nothing more) and the caller is told it died.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { LOCAL_LAMBDA_RUNTIME } from '../lambdas/demo/worker-death.ts';
import type { LocalLambdaRuntime } from '../lambdas/demo/worker-death.ts';

interface Invocation {
  readonly died: () => void;
}

const current = new AsyncLocalStorage<Invocation>();

const runtime: LocalLambdaRuntime = {
  die() {
    const invocation = current.getStore();
    if (invocation === undefined) throw new Error('die() was called outside a local invocation');
    invocation.died();
    return new Promise<never>(() => undefined);
  },
};

/** The outcome of one local invocation. */
export type InvocationOutcome<T> = { readonly died: false; readonly value: T } | { readonly died: true };

/**
 * Runs one invocation of a handler. Resolves with its value, or with `died` as soon as
 * code inside it called the runtime's `die()`; rejects as the handler does.
 */
export function invoke<T>(handler: () => Promise<T>): Promise<InvocationOutcome<T>> {
  (globalThis as Record<symbol, LocalLambdaRuntime | undefined>)[LOCAL_LAMBDA_RUNTIME] ??= runtime;
  return new Promise<InvocationOutcome<T>>((resolve, reject) => {
    const died = (): void => {
      resolve({ died: true });
    };
    current.run({ died }, () => {
      handler().then((value) => {
        resolve({ died: false, value });
      }, reject);
    });
  });
}
