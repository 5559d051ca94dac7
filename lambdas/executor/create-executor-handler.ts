/**
 * The executor Lambda: middy around Powertools batch processing. Records of a batch run
 * concurrently; each one that must be tried again is reported in `batchItemFailures`,
 * so one bad record never fails the rest.
 * A record whose handling fails on our own dependency goes back with a visibility that doubles
 * with its receive count (docs/architecture.md#every-receive-counts-toward-maxreceivecount).
 */
import middy from '@middy/core';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { MessageVisibility } from '../ports/message-visibility.ts';
import { execute } from './execute-message.ts';
import type { ExecutionReport, ExecutorDeps } from './execute-message.ts';
import type { RoutePauses } from './route-pauses.ts';
import { recordExecutions } from './executor-metrics.ts';
import { prepareExecutor } from './prepared-executor.ts';

export interface ExecutorHandlerDeps extends Omit<ExecutorDeps, 'remainingMs' | 'requestId' | 'isPaused'> {
  /**
   * The visibility, in seconds, of a message handed back after our own dependency failed on
   * its `receiveCount`-th receive (protocol-limits.ts, dependencyBackoffSeconds). @default - the
   * queue's visibility timeout
   */
  readonly dependencyBackoff?: (receiveCount: number) => number;
  /** Whether a route is paused (route-pauses.ts: cached per container when deployed). @default - no route is ever paused */
  readonly pauses?: RoutePauses;
  /**
   * Hands messages back sooner or later than the visibility timeout: dead-letter copies at
   * once, locked work when its lease ends. @default - every hand-back waits out the visibility timeout
   */
  readonly visibility?: MessageVisibility;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** Thrown for a record that goes back to SQS; Powertools turns it into a batch item failure. */
export class HandBack extends Error {
  constructor(outcome: string) {
    super(`handed back to SQS: ${outcome}`);
    this.name = 'HandBack';
  }
}

export function createExecutorHandler(deps: ExecutorHandlerDeps) {
  const { logger, metrics, pauses } = deps;
  // Defaults applied and every route's gates built once per instance; one StartLead, so each
  // rate-limited run's writes teach the next its lead (start-lead.ts).
  const executor = prepareExecutor({ ...deps, ...(pauses === undefined ? {} : { isPaused: (route: string) => pauses.isPaused(route) }) });
  return middy<SQSEvent, SQSBatchResponse>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
    .handler(async (event, context) => {
      // No per-batch count: Lambda's Invocations and SQS's NumberOfMessagesReceived have it.
      const reports: ExecutionReport[] = [];
      const processor = new BatchProcessor(EventType.SQS);
      const recordHandler = async (record: SQSRecord): Promise<void> => {
        const receiveCount = Number(record.attributes.ApproximateReceiveCount);
        const sentAt = Number(record.attributes.SentTimestamp);
        let report;
        try {
          report = await execute(
            executor,
            { messageId: record.messageId, body: record.body, receiveCount, ...(Number.isFinite(sentAt) && sentAt > 0 ? { sentAt } : {}) },
            { remainingMs: () => context.getRemainingTimeInMillis(), requestId: context.awsRequestId },
          );
        } catch (error) {
          await backOff(record, receiveCount, error);
          throw error;
        }
        reports.push(report);
        logExecution(logger, report, record.messageId);
        if (!report.ack) {
          if (report.visibilitySeconds !== undefined) await deps.visibility?.changeVisibility(record.receiptHandle, report.visibilitySeconds, record.eventSourceARN);
          throw new HandBack(report.outcome);
        }
      };
      /** Our own dependency failed: the message comes back later each time, and the failure is logged. */
      const backOff = async (record: SQSRecord, receiveCount: number, error: unknown): Promise<void> => {
        const seconds = deps.dependencyBackoff?.(receiveCount);
        // Our own dependency failed (DynamoDB or SQS): the error the ExecutorErrors alarm's reader looks for.
        logger.error('dependency failure', {
          messageId: record.messageId,
          receiveCount,
          ...(seconds === undefined ? {} : { handedBackForSeconds: seconds }),
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
        if (seconds === undefined || deps.visibility === undefined) return;
        try {
          await deps.visibility.changeVisibility(record.receiptHandle, seconds, record.eventSourceARN);
        } catch (visibilityError) {
          // SQS is down too: the message comes back after the plain visibility timeout.
          logger.warn('dependency backoff not applied', { messageId: record.messageId, error: String(visibilityError) });
        }
      };
      try {
        return await processPartialResponse(event, recordHandler, processor, {
          context,
          processInParallel: true,
          // Every record handed back (all locked, say) is a normal answer, not a crash.
          throwOnFullBatchFailure: false,
        });
      } finally {
        recordExecutions(metrics, reports);
      }
    });
}

/** One log line per message, at the level a person needs it. */
function logExecution(logger: Logger, report: ExecutionReport, messageId: string): void {
  // why: docs/architecture.md#log-lines (never the body; the message id only on a warning)
  const fields = {
    route: report.route,
    key: report.key,
    attempt: report.attempt,
    outcome: report.outcome,
    ...(report.deadLetterReason === undefined ? {} : { deadLetterReason: report.deadLetterReason }),
    ...(report.error === undefined ? {} : { error: report.error }),
  };
  if (report.outcome === 'to-dead-letter-queue') logger.debug('execution', { ...fields, messageId });
  else if (report.outcome === 'rate-limited') logger.debug('execution', fields);
  else if (report.deadLetterReason !== undefined || report.outcome === 'fenced-out') logger.warn('execution', { ...fields, messageId });
  else logger.info('execution', fields);
}
