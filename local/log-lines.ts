/**
 * The local stack's compact log lines: one per delivery, one per execution attempt, one
 * per reconciliation. Route, key and outcome only: never bodies or signatures.
 */
import type { SignatureConfig } from '../lambdas/config/route-config.ts';
import { GITHUB_SIGNATURE_HEADER } from '../lambdas/domain/signatures/github.ts';
import { SHOPIFY_SIGNATURE_HEADER } from '../lambdas/domain/signatures/shopify.ts';
import { SLACK_HEADERS } from '../lambdas/domain/signatures/slack.ts';
import { STANDARD_WEBHOOKS_HEADERS } from '../lambdas/domain/signatures/standard-webhooks.ts';
import { STRIPE_SIGNATURE_HEADER } from '../lambdas/domain/signatures/stripe.ts';
import { DEFAULT_TOLERANCE_SECONDS } from '../lambdas/domain/signatures/timestamp.ts';
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
  /** Why it was refused, for the operator only (the sender never sees it). */
  readonly detail?: string;
}

/** `12:00:01.234 in   demo/msg_1  202 accepted  3 ms` */
export function deliveryLine(d: DeliveryLine, at?: number): string {
  const what =
    d.status === 202 && !d.replayed ? 'accepted' : d.replayed ? 'replayed' : (d.title ?? (d.status >= 500 ? 'failed' : 'refused'));
  const why = d.detail === undefined ? '' : ` (${d.detail})`;
  return `${clock(at)} in   ${d.id ?? `${d.route}/-`}  ${d.status} ${what}${why}  ${Math.round(d.ms)} ms`;
}

/** The headers a scheme's sender must send: the signature and, where signed, id and timestamp. */
export function signatureHeaders(signature: SignatureConfig): readonly string[] {
  switch (signature.scheme) {
    case 'standard-webhooks':
      return [STANDARD_WEBHOOKS_HEADERS.id, STANDARD_WEBHOOKS_HEADERS.timestamp, STANDARD_WEBHOOKS_HEADERS.signature];
    case 'stripe':
      return [STRIPE_SIGNATURE_HEADER];
    case 'github':
      return [GITHUB_SIGNATURE_HEADER];
    case 'shopify':
      return [SHOPIFY_SIGNATURE_HEADER];
    case 'slack':
      return [SLACK_HEADERS.timestamp, SLACK_HEADERS.signature];
    case 'hmac-sha256':
      return [signature.header.toLowerCase()];
  }
}

/**
 * Why a 401 was given, in words an operator can act on: the verifier's reason (from
 * UnauthorizedError.reason) and the headers the route's scheme reads. Local stack only:
 * the deployed ingest logs the reason, and the sender always gets a bare 401.
 */
export function unauthorizedDetail(reason: string, signature: SignatureConfig | undefined): string {
  if (signature === undefined) return reason;
  const headers = signatureHeaders(signature);
  const scheme = signature.scheme;
  const signatureHeader = headers.at(-1) ?? '';
  switch (reason) {
    case 'missing-signature':
      return `missing-signature: ${scheme} needs the header${headers.length === 1 ? '' : 's'} ${headers.join(', ')}`;
    case 'malformed-signature': {
      const format = signature.scheme === 'hmac-sha256' ? ` (${signature.prefix ?? ''}<${signature.encoding ?? 'hex'} digest>)` : '';
      return `malformed-signature: ${headers.join(', ')} not in the ${scheme} format${format}`;
    }
    case 'bad-signature':
      return `bad-signature: ${signatureHeader} does not match the body under the route's secret`;
    case 'stale-timestamp': {
      const tolerance = 'toleranceSeconds' in signature ? (signature.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) : DEFAULT_TOLERANCE_SECONDS;
      const stamp = scheme === 'stripe' ? `${STRIPE_SIGNATURE_HEADER} t=` : (headers.find((h) => h.includes('timestamp')) ?? 'the timestamp');
      return `stale-timestamp: ${stamp} is more than ${tolerance} s from this clock`;
    }
    default:
      return reason;
  }
}

/** `12:00:01.240 exec demo/msg_1  attempt 1 completed`, from the executor's `execution` log entry. */
export function executionLine(entry: LogEntry, at?: number): string | undefined {
  if (entry.message !== 'execution') return undefined;
  const route = typeof entry.route === 'string' ? entry.route : '?';
  const key = typeof entry.key === 'string' ? entry.key : '?';
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
