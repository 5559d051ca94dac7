/**
 * A Powertools Logger whose entries go to a function instead of stdout as JSON, so the
 * local stack can print one compact line per execution. The handlers keep their real
 * logging calls; only the printing changes.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogItem } from '@aws-lambda-powertools/logger';

/** One log entry's attributes, as Powertools would have printed them. */
export type LogEntry = Readonly<Record<string, unknown>>;

export class LineLogger extends Logger {
  readonly #sink: (entry: LogEntry) => void;

  /** @param sink gets every entry at `logLevel` or above */
  constructor(serviceName: string, sink: (entry: LogEntry) => void, logLevel: 'INFO' | 'WARN' | 'ERROR' = 'INFO') {
    super({ serviceName, logLevel });
    this.#sink = sink;
  }

  protected override printLog(_logLevel: number, log: LogItem): void {
    this.#sink(log.getAttributes());
  }
}
