/**
 * The executor use case: one SQS message in, exactly one effect out. Each message passes its
 * route's gates (prepared-executor.ts, gatesFor): unreadable, body missing, dead-letter copy,
 * unrunnable, paused, entity turn, rate gate; then the lease, the run with the idempotency key,
 * and settle (complete, release or fail), each write fenced by the lease token
 * (docs/architecture.md#the-executor-gate-by-gate). It knows nothing of middy or the SDK.
 */
import type { ExecutionReport } from './execution-report.ts';
import type { Executor, ExecutorDeps, QueuedMessage } from './executor-deps.ts';
import { contextOf, runGates } from './message-context.ts';
import type { Invocation } from './message-context.ts';
import { invocationOf, prepareExecutor } from './prepared-executor.ts';

export { EXECUTION_OUTCOME } from './execution-report.ts';
export type { ExecutionOutcome, ExecutionReport } from './execution-report.ts';
export type { Executor, ExecutorDeps, QueuedMessage } from './executor-deps.ts';
export { DeadLetterSendLateError } from './dead-letter.ts';
export { fingerprintOf, parseWorkMessage } from './work-message.ts';

/**
 * Handles one message with deps whose defaults are applied for it alone (tests, tools); the
 * handler prepares its executor once and calls {@link execute}. Never throws for a problem of the
 * message itself; only for our own dependencies.
 */
export function executeMessage(deps: ExecutorDeps, message: QueuedMessage): Promise<ExecutionReport> {
  return execute(prepareExecutor(deps), message, invocationOf(deps));
}

/** One message through its route's gates, in order, until one reports: settle always does. */
export function execute(executor: Executor, message: QueuedMessage, invocation: Invocation): Promise<ExecutionReport> {
  const ctx = contextOf(executor, message, invocation);
  const route = ctx.parsed === undefined ? undefined : executor.routes.get(ctx.parsed.route);
  return runGates(route?.gates ?? executor.unrouted, ctx);
}
