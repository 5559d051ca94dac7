import { sendDeadLetter } from '../dead-letter.ts';
import { EXECUTION_OUTCOME } from '../execution-report.ts';
import type { Gate } from '../message-context.ts';

/**
 * Work whose route or action no longer exists is never run blindly: it reaches the DLQ with its
 * reason (docs/architecture.md#the-retry-budget-and-the-dlq).
 */
export const unrunnable: Gate = (ctx) => {
  const route = ctx.executor.routes.get(ctx.work.route);
  if (route?.action === undefined) {
    const reason = route === undefined ? `route "${ctx.work.route}" is not configured` : `action "${route.config.action}" is not registered`;
    return sendDeadLetter(ctx, reason, EXECUTION_OUTCOME.unreadable);
  }
  ctx.route = route.config;
  ctx.action = route.action;
  return undefined;
};
