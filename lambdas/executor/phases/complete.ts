import type { ActionResult } from '../../actions/action.ts';
import { moveLine } from '../entity-line.ts';
import { EXECUTION_OUTCOME } from '../execution-report.ts';
import type { ExecutionReport } from '../execution-report.ts';
import type { MessageContext } from '../message-context.ts';
import { fencedOut } from '../reports.ts';

const RESULT_LIMIT = 1024;

/**
 * COMPLETED while the token still matches, the attempt logged on the record itself; then the
 * entity's line moves on. Fenced out, the attempt gets a log item of its own and the message goes
 * back (docs/architecture.md#every-write-can-be-ambiguous).
 */
export async function complete(ctx: MessageContext, result: ActionResult): Promise<ExecutionReport> {
  const { executor, lease, invocation } = ctx;
  const endedAt = executor.now();
  const completed = await executor.store.complete({
    ...lease.fence,
    nowMs: endedAt,
    result: resultOf(result),
    operationFingerprint: lease.log.operationFingerprint,
    ...(invocation.requestId === undefined ? {} : { requestId: invocation.requestId }),
  });
  const leaseShare = (endedAt - lease.startedAt) / (lease.times.leaseSeconds * 1000);
  if (completed) {
    await moveLine(ctx);
    return { ...ctx.about, attempt: lease.attempt, outcome: EXECUTION_OUTCOME.completed, ack: true, leaseShare };
  }
  await executor.store.appendLog({ ...lease.log, endedAt, outcome: EXECUTION_OUTCOME.fencedOut });
  return { ...fencedOut(ctx, lease.attempt), leaseShare };
}

function resultOf(result: ActionResult): string {
  const text = JSON.stringify(result ?? {});
  return text.length <= RESULT_LIMIT ? text : JSON.stringify({ truncated: true, head: text.slice(0, RESULT_LIMIT - 40) });
}
