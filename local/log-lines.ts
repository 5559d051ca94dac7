/**
 * The local stack's compact log lines: one per delivery, one per execution attempt, one
 * per reconciliation. Route, key and outcome only: never bodies or signatures.
 */
import type { LogEntry } from './line-logger.ts';

function clock(at: number = Date.now()): string {
  return new Date(at).toISOString().slice(11, 23);
}

/** The `<route>/<key>` a 202 or a replay names in its body, if any. */
export function deliveryIdOfAnswer(body: string | undefined): string | undefined {
  if (body === undefined || !body.startsWith('{')) return undefined;
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

export interface DeliveryLine {
  readonly route: string;
  /** `<route>/<key>` when known. */
  readonly id: string | undefined;
  readonly status: number;
  readonly replayed: boolean;
  readonly ms: number;
  readonly title?: string;
}

/** `12:00:01.234 in   demo/msg_1  202 accepted  3 ms` */
export function deliveryLine(d: DeliveryLine, at?: number): string {
  const what =
    d.status === 202 && !d.replayed ? 'accepted' : d.replayed ? 'replayed' : (d.title ?? (d.status >= 500 ? 'failed' : 'refused'));
  return `${clock(at)} in   ${d.id ?? `${d.route}/-`}  ${d.status} ${what}  ${Math.round(d.ms)} ms`;
}

/** `12:00:01.240 exec demo/msg_1  attempt 1 completed`, from the executor's `execution` log entry. */
export function executionLine(entry: LogEntry, at?: number): string | undefined {
  if (entry.message !== 'execution') return undefined;
  const route = typeof entry.route === 'string' ? entry.route : '?';
  const key = typeof entry.idempotencyKey === 'string' ? entry.idempotencyKey : '?';
  const attempt = typeof entry.attempt === 'number' ? `attempt ${entry.attempt} ` : '';
  const outcome = typeof entry.outcome === 'string' ? entry.outcome : 'unknown';
  const dlq = typeof entry.deadLetterReason === 'string' ? `  -> DLQ (${entry.deadLetterReason})` : '';
  const error = typeof entry.error === 'string' ? `  ${entry.error.slice(0, 120)}` : '';
  return `${clock(at)} exec ${route}/${key}  ${attempt}${outcome}${dlq}${error}`;
}

export interface ReconcileCounts {
  readonly scanned: number;
  readonly reenqueued: number;
  readonly reversed: number;
  readonly missing: number;
  readonly orphans: number;
  readonly failed: number;
  readonly parked: number;
  readonly needsAttention: number;
}

/** `12:00:00.000 reconcile  scanned 40, re-enqueued 0, reversed 1, needs attention 2` */
export function reconcileLine(counts: ReconcileCounts, stoppedEarly: boolean, at?: number): string {
  return (
    `${clock(at)} reconcile  scanned ${counts.scanned}, re-enqueued ${counts.reenqueued}, reversed ${counts.reversed}, ` +
    `missing ${counts.missing}, orphans ${counts.orphans}, failed ${counts.failed}, parked ${counts.parked}, ` +
    `needs attention ${counts.needsAttention}${stoppedEarly ? ' (stopped early: budget spent)' : ''}`
  );
}
