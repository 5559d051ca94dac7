import { EXECUTION_OUTCOME } from '../execution-report.ts';
import type { Gate } from '../message-context.ts';

/**
 * Not ours to execute, and no record to name: the queue moves it to the DLQ as it is
 * (docs/architecture.md#the-retry-budget-and-the-dlq).
 */
export const unreadable: Gate = (ctx) => {
  const work = ctx.parsed;
  if (work === undefined) return { outcome: EXECUTION_OUTCOME.unreadable, ack: false, visibilitySeconds: 0, deadLetterReason: 'unreadable message' };
  ctx.work = work;
  ctx.about = { route: work.route, key: work.key };
  ctx.ref = { route: work.route, key: work.key, receivedAt: work.receivedAt };
  return undefined;
};
