import { DependencyError } from '../domain/errors.ts';

/** Runs a call to one of our dependencies: its failure is ours, a 5xx the sender's retry heals. */
export async function dependency<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw new DependencyError(name, { cause: err });
  }
}

/**
 * Runs the breaker's bookkeeping (markAnswered, excuseRacingCopy): true when it was written. Its
 * failure leaves the answer as it is, since the work is on its way; a lost mark only makes the
 * breaker count one copy later, a lost excuse one racing copy (the outcome's markFailed).
 */
export async function bookkeeping(write: () => Promise<void>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch {
    return false;
  }
}
