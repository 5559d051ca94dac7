/**
 * What the three receivers under benchmark share: the route they serve, how an HTTP API
 * event becomes bytes and headers, the SQS message they queue, and the effect counter
 * that tells how many times each one decided to execute the work for a key.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';
import { fingerprint } from '../../lambdas/domain/fingerprint.ts';

/** An ingest Lambda handler as API Gateway (HTTP API, payload 2.0) invokes it. */
export type IngestHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export const RECEIVER_NAMES = ['retryproof', 'powertools', 'naive'] as const;
export type ReceiverName = (typeof RECEIVER_NAMES)[number];

/** The one route every receiver serves: a Standard Webhooks sender, its key in `webhook-id`. */
export const BENCH_ROUTE = {
  name: 'orders',
  secretName: 'bench/orders',
  keyHeader: 'webhook-id',
  /** retryproof's default TTL; the peers are given the same window so they keep keys as long. */
  ttlSeconds: 35 * 86_400,
} as const;

/** The bytes and lowercase headers of an HTTP API v2 event, as the ingest reads them. */
export function incomingOf(event: APIGatewayProxyEventV2): { headers: Record<string, string | undefined>; rawBody: Buffer } {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers)) headers[name.toLowerCase()] = value;
  const body = event.body ?? '';
  return { headers, rawBody: event.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8') };
}

/** The message the peers queue: the same shape and size as retryproof's own. */
export function workMessageFor(key: string, rawBody: Buffer, nowMs: number): WorkMessage {
  return {
    v: 1,
    route: BENCH_ROUTE.name,
    key,
    fingerprint: fingerprint(rawBody),
    receivedAt: nowMs,
    body: rawBody.toString('utf8'),
    bodyEncoding: 'utf8',
    headers: { 'content-type': 'application/json' },
  };
}

/** The answer to a new delivery, the same for all three receivers. */
export function acceptedAnswer(key: string): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: 202,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: `${BENCH_ROUTE.name}/${key}`, status: 'accepted' }),
  };
}

/**
 * Counts executions of the effect per key. A receiver calls `run(key)` at the moment it
 * has decided to process a delivery; `run` then takes `effectMs`, as a business step
 * would, so copies that arrive meanwhile overlap with it.
 */
export class EffectCounter {
  readonly perKey = new Map<string, number>();
  /** How long one execution takes. @default 0 */
  effectMs = 0;

  /** Counts one execution for `key` and takes `effectMs` doing it. */
  async run(key: string): Promise<void> {
    this.count(key);
    if (this.effectMs > 0) await new Promise((resolve) => setTimeout(resolve, this.effectMs));
  }

  /** Counts one execution for `key` that takes no time here (it is queued for later). */
  count(key: string): void {
    this.perKey.set(key, (this.perKey.get(key) ?? 0) + 1);
  }

  total(): number {
    let sum = 0;
    for (const n of this.perKey.values()) sum += n;
    return sum;
  }

  /** Keys executed more than once, and the executions beyond the first. */
  duplicates(): { keys: number; extraExecutions: number; maxPerKey: number } {
    let keys = 0;
    let extraExecutions = 0;
    let maxPerKey = 0;
    for (const n of this.perKey.values()) {
      if (n > 1) keys++;
      extraExecutions += Math.max(0, n - 1);
      maxPerKey = Math.max(maxPerKey, n);
    }
    return { keys, extraExecutions, maxPerKey };
  }

  reset(): void {
    this.perKey.clear();
  }
}
