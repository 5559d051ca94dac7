/**
 * The executor Lambda: middy around Powertools batch processing. Records of a batch run
 * concurrently; each one that must be tried again is reported in `batchItemFailures`,
 * so one bad record never fails the rest.
 */
import middy from '@middy/core';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { MessageVisibility } from '../ports/message-visibility.ts';
import type { RouteStateStore } from '../ports/route-state-store.ts';
import { executeMessage } from './execute-message.ts';
import type { ExecutorDeps } from './execute-message.ts';
import { recordExecution } from './executor-metrics.ts';
import { EXECUTOR_METRIC } from '../observability/metric-catalogue.ts';

export interface ExecutorHandlerDeps extends Omit<ExecutorDeps, 'remainingMs' | 'requestId' | 'isPaused'> {
  /** Route states, read once per route and batch. @default - no route is ever paused */
  readonly routeState?: RouteStateStore;
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
  const { logger, metrics } = deps;
  return middy<SQSEvent, SQSBatchResponse>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
    .handler(async (event, context) => {
      metrics.addMetric(EXECUTOR_METRIC.recordsReceived, MetricUnit.Count, event.Records.length);
      const processor = new BatchProcessor(EventType.SQS);
      // One read per route and batch: a pause takes effect from the next batch on.
      const paused = new Map<string, Promise<boolean>>();
      const isPaused = (route: string): Promise<boolean> => {
        const store = deps.routeState;
        if (store === undefined) return Promise.resolve(false);
        let state = paused.get(route);
        if (state === undefined) {
          state = store.get(route).then((s) => s.state === 'paused');
          paused.set(route, state);
        }
        return state;
      };
      const recordHandler = async (record: SQSRecord): Promise<void> => {
        const report = await executeMessage(
          { ...deps, remainingMs: () => context.getRemainingTimeInMillis(), requestId: context.awsRequestId, isPaused },
          {
            messageId: record.messageId,
            body: record.body,
            receiveCount: Number(record.attributes.ApproximateReceiveCount),
          },
        );
        recordExecution(metrics, report);
        // Route, key and outcome only: never the body.
        const fields = {
          route: report.route,
          idempotencyKey: report.key,
          attempt: report.attempt,
          outcome: report.outcome,
          messageId: record.messageId,
          ...(report.deadLetterReason === undefined ? {} : { deadLetterReason: report.deadLetterReason }),
          ...(report.error === undefined ? {} : { error: report.error }),
        };
        if (report.outcome === 'to-dead-letter-queue') logger.debug('execution', fields);
        else if (report.deadLetterReason !== undefined || report.outcome === 'fenced-out') logger.warn('execution', fields);
        else logger.info('execution', fields);
        if (!report.ack) {
          if (report.visibilitySeconds !== undefined) await deps.visibility?.changeVisibility(record.receiptHandle, report.visibilitySeconds);
          throw new HandBack(report.outcome);
        }
      };
      return processPartialResponse(event, recordHandler, processor, {
        context,
        processInParallel: true,
        // Every record handed back (all locked, say) is a normal answer, not a crash.
        throwOnFullBatchFailure: false,
      });
    });
}
