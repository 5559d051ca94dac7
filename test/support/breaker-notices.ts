/**
 * The circuit breaker's notices as the ingest announces them: its `circuit breaker tripped`
 * log line, which the local stack prints and CloudWatch keeps beside the RoutePaused alarm.
 */
import { LineLogger } from '../../local/line-logger.ts';
import { SERVICE } from '../../lambdas/observability/metric-catalogue.ts';

export interface NoticeLog {
  /** An ingest logger that keeps every announced notice (warnings and up only). */
  readonly logger: LineLogger;
  /** The notices announced so far, oldest first. */
  readonly notices: () => readonly Record<string, unknown>[];
}

export function noticeLog(): NoticeLog {
  const seen: Record<string, unknown>[] = [];
  const logger = new LineLogger(
    SERVICE.ingest,
    (entry) => {
      if (entry.message === 'circuit breaker tripped' && typeof entry.notice === 'object' && entry.notice !== null) {
        seen.push(entry.notice as Record<string, unknown>);
      }
    },
    'WARN',
  );
  return { logger, notices: () => [...seen] };
}
