import { LAST_ERROR_MAX_CHARS, cut } from '../domain/queue-limits.ts';

/** An attempt's error as its log item keeps it. */
export interface DescribedError {
  readonly class: string;
  readonly message: string;
}

export function describeError(error: unknown): DescribedError {
  if (error instanceof Error) return { class: error.name, message: error.message.slice(0, LAST_ERROR_MAX_CHARS) };
  return { class: 'Unknown', message: String(error).slice(0, LAST_ERROR_MAX_CHARS) };
}

/** The last error as the record and a dead-letter copy keep it: at most LAST_ERROR_MAX_CHARS (queue-limits.ts). */
export function lastErrorOf(described: DescribedError): string {
  return cut(`${described.class}: ${described.message}`, LAST_ERROR_MAX_CHARS);
}
