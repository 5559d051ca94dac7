/**
 * The executor Lambda: middy around Powertools batch processing. Records of a batch run
 * concurrently; each one that must be tried again is reported in `batchItemFailures`,
 * so one bad record never fails the rest.
 *
 * A record whose handling fails on our own dependency (DynamoDB or SQS down, throttled, slow)
 * goes back with a visibility that doubles with its receive count (dependencyBackoff). Every
 * receive counts toward the queue's maxReceiveCount ("If your function is throttled, returns an
 * error, or doesn't respond, the message becomes visible again", Lambda Developer Guide, "Using
 * Lambda with Amazon SQS"), so without the backoff a one-hour outage (12 receives of 330 s)
 * would send ordinary work to the DLQ; with it a day costs about 9 receives, which the default
 * maxReceiveCount covers (route-config.ts, outageReceiveCount).
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
   * its `receiveCount`-th receive (route-config.ts, dependencyBackoffSeconds). @default - the
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
      // No per-batch count of records: Lambda's Invocations and SQS's NumberOfMessagesReceived
      // count them already, and no alarm or widget read the one that was here (issue 26).
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
          // SQS is down too: the message comes back after the plain visibility timeout; says why it came back sooner than the backoff.
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
  // Route, key, attempt and outcome only: never the body. The message id only where a
  // person follows one message (a warning), not on every completed attempt.
  const fields = {
    route: report.route,
    key: report.key,
    attempt: report.attempt,
    outcome: report.outcome,
    ...(report.deadLetterReason === undefined ? {} : { deadLetterReason: report.deadLetterReason }),
    ...(report.error === undefined ? {} : { error: report.error }),
  };
  // A message on its way to the DLQ: each trip is detail (its copy was logged as a warning when made).
  if (report.outcome === 'to-dead-letter-queue') logger.debug('execution', { ...fields, messageId });
  // Work waiting for its route's rate limit: routine, and counted (Executions, outcome rate-limited).
  else if (report.outcome === 'rate-limited') logger.debug('execution', fields);
  // A dead-letter copy made, or a completion fenced out: someone must look; the DLQ runbook starts here.
  else if (report.deadLetterReason !== undefined || report.outcome === 'fenced-out') logger.warn('execution', { ...fields, messageId });
  // The one line per execution attempt: what an operator searches by route and key (and the local stack prints).
  else logger.info('execution', fields);
}
