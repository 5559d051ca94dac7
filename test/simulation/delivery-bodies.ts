/** What a sender sends: its secret, its bodies at and over the limits, its proxies' padding. */
import { SQS_MAX_MESSAGE_BYTES, deadLetterReserveBytes } from '../../lambdas/domain/queue-limits.ts';
import { PAY_BODY_LIMIT, SECRET, SW_SECRET } from './sim-constants.ts';

/** The destination of the i-th key's payout on the Stripe route: one the table names, one it does not, or none. */
export function destinationOf(i: number): Readonly<Record<string, unknown>> {
  const destination = ['EU', 'LATAM', 'APAC', undefined][Math.floor(i / 5) % 4];
  return destination === undefined ? {} : { destination };
}

export function secretOf(route: { readonly signature: { readonly scheme: string } }): string {
  return route.signature.scheme === 'standard-webhooks' ? SW_SECRET : SECRET;
}

/** Whitespace a proxy may put around a header's value: none mostly, else a space or a tab on either side. */
export function paddingOf(roll: number): { before: string; after: string } | undefined {
  if (roll < 0.7) return undefined;
  if (roll < 0.8) return { before: ' ', after: '' };
  if (roll < 0.9) return { before: '', after: ' ' };
  return { before: '\t', after: ' ' };
}

/** A body's size: small, or at one of the limits (the route's body limit; SQS's 256 KiB once the body is escaped into a message). */
export type SizeClass = 'small' | 'at-route-limit' | 'over-route-limit' | `queue-edge${'-300' | '-60' | '0' | '+60' | '+300'}`;

/** The pay route's bodies: some at its body limit (the hard maximum) and some near what SQS can carry. */
export function sizeClassOf(roll: number): SizeClass {
  if (roll < 0.7) return 'small';
  if (roll < 0.76) return 'at-route-limit';
  if (roll < 0.8) return 'over-route-limit';
  const edges = ['queue-edge-300', 'queue-edge-60', 'queue-edge0', 'queue-edge+60', 'queue-edge+300'] as const;
  return edges[Math.min(edges.length - 1, Math.floor(((roll - 0.8) / 0.2) * edges.length))] ?? 'small';
}

/** The alerting route's bodies: at and over its small limit. */
export function smallSizeClassOf(roll: number): SizeClass {
  return roll < 0.6 ? 'small' : roll < 0.8 ? 'at-route-limit' : 'over-route-limit';
}

/**
 * The body of an order. At a route limit: exactly that many bytes, or one more. At the queue's
 * edge: a pad of backslashes, each of which the body's JSON escapes once and the work message
 * escapes again, sized so that the escaped body plus the largest dead-letter copy's fields
 * (queue-limits.ts, deadLetterReserveBytes) comes within a few hundred bytes of SQS's limit.
 */
export function bodyOf(order: string, size: SizeClass, routeLimit = PAY_BODY_LIMIT, extra: Readonly<Record<string, unknown>> = {}): Buffer {
  const base = { order, id: order, amount: 100, ...extra };
  const padded = (pad: string): Buffer => Buffer.from(JSON.stringify({ ...base, pad }));
  if (size === 'small') return padded('');
  if (size === 'at-route-limit' || size === 'over-route-limit') {
    const target = routeLimit + (size === 'over-route-limit' ? 1 : 0);
    return padded('x'.repeat(target - padded('').length));
  }
  const delta = Number(size.slice('queue-edge'.length));
  // JSON.stringify(body) of n backslashes (2n in the body) is 4n + overhead.
  const escapedOverhead = JSON.stringify(padded('').toString()).length;
  const n = Math.floor((SQS_MAX_MESSAGE_BYTES - deadLetterReserveBytes() - 400 - escapedOverhead + delta) / 4);
  return padded('\\'.repeat(n));
}

/** The bytes SQS counts for a work message as SqsWorkQueue sends it: the JSON body and each attribute's name, type and value. */
export function sqsBytesOf(message: { readonly route: string; readonly key: string; readonly reason?: string }): number {
  let bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
  const attributes: Record<string, string> = { route: message.route, key: message.key, ...(message.reason === undefined ? {} : { reason: message.reason }) };
  for (const [name, value] of Object.entries(attributes)) bytes += Buffer.byteLength(name) + 'String'.length + Buffer.byteLength(value);
  return bytes;
}
