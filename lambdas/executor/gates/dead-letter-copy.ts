import { keepUntilSeconds } from '../../store/record-transitions.ts';
import { EXECUTION_OUTCOME } from '../execution-report.ts';
import type { ExecutionReport } from '../execution-report.ts';
import type { Gate, MessageContext } from '../message-context.ts';

/**
 * A dead-letter copy is handed back until the queue moves it to the DLQ; one a person redrove
 * (stamped by SQS after every copy of ours) wins the redrive once and runs as a wake-up call
 * (docs/architecture.md#the-retry-budget-and-the-dlq).
 */
export const deadLetterCopy: Gate = (ctx) => (ctx.work.deadLetterId === undefined ? undefined : handBackUnlessRedriven(ctx));

async function handBackUnlessRedriven(ctx: MessageContext): Promise<ExecutionReport | undefined> {
  const { work, message, executor } = ctx;
  const id = work.deadLetterId ?? '';
  const handBack: ExecutionReport = {
    ...ctx.about,
    outcome: EXECUTION_OUTCOME.toDeadLetterQueue,
    ack: false,
    visibilitySeconds: 0,
    ...(work.reason === undefined ? {} : { deadLetterReason: work.reason }),
  };
  // No route or no action: nothing could run it, whoever sent it.
  if (executor.routes.get(work.route)?.action === undefined) return handBack;
  const record = await executor.store.get(work.route, work.key);
  const now = executor.now();
  // No record of this generation, or not the body it was accepted with: it never runs; people see it in the DLQ.
  if (record?.receivedAt !== work.receivedAt || record.expiresAt <= Math.floor(now / 1000)) return handBack;
  if (record.fingerprint !== ctx.body.fingerprint) return handBack;
  if (record.deadLetterId !== id) return undefined;
  if (message.sentAt !== undefined) {
    const won = await executor.store.redrive({
      ...ctx.ref,
      nowMs: now,
      deadLetterId: id,
      stampedAtMs: message.sentAt,
      keepUntilSeconds: keepUntilSeconds(record.expiresAt, now),
    });
    if (won) return undefined;
  }
  // Refused: back it goes, to the DLQ for a person; its last receive marks the record (the reconciler's hint).
  if (message.receiveCount >= executor.maxReceiveCount) await executor.store.markDeadLettered(work.route, work.key, id);
  return handBack;
}
