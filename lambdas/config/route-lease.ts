/**
 * The lease one record is given: its route's action time, or, on a route with a per-destination
 * table (RouteConfig.actionTime), the time its own body's field picks, times LEASE_FACTOR. Pure:
 * the executor calls it at claim time for each record, resolveConfig for the route's longest.
 */
import { Buffer } from 'node:buffer';
import { resolveJsonPointer } from '../domain/key-template.ts';
import type { ResolvedActionTime, ResolvedRoute } from './resolve-config.ts';
import { LEASE_FACTOR, leaseMarginSeconds } from './route-config.ts';

/** The times of one lease, in seconds. */
export interface LeaseTimes {
  /** The action's declared run time for this record. */
  readonly actionTimeSeconds: number;
  /** actionTimeSeconds x LEASE_FACTOR: how long the claim holds the record. */
  readonly leaseSeconds: number;
  /** When the action is aborted, a margin before the lease ends, so a live worker's completion lands inside it. */
  readonly actionDeadlineSeconds: number;
}

/** The lease and the action deadline of an action time, as every route and record gets them. */
export function leaseOfActionTime(actionTimeSeconds: number): LeaseTimes {
  const leaseSeconds = actionTimeSeconds * LEASE_FACTOR;
  return { actionTimeSeconds, leaseSeconds, actionDeadlineSeconds: Math.max(1, leaseSeconds - leaseMarginSeconds(leaseSeconds)) };
}

/**
 * The table's longest time and what picks it: the first destination with it, or `otherwise`
 * when no destination's time is as long. Names the lease in the TTL cover check's message.
 */
export function longestActionTime(table: Pick<ResolvedActionTime, 'seconds' | 'otherwise'>): { readonly destination: string | undefined; readonly seconds: number } {
  let longest: { destination: string | undefined; seconds: number } = { destination: undefined, seconds: table.otherwise };
  for (const [destination, seconds] of Object.entries(table.seconds)) {
    if (seconds > longest.seconds || (seconds === longest.seconds && longest.destination === undefined)) longest = { destination, seconds };
  }
  return longest;
}

/**
 * The JSON document of a body, or undefined when it is not JSON. A base64 body (API Gateway
 * delivered it as binary: a content type it does not take for text) is decoded first, as the
 * ingest's key template reads it (ingest/steps/derive-key.ts): the same bytes, whichever way they came.
 */
function documentOf(body: string, bodyEncoding: 'utf8' | 'base64'): unknown {
  const text = bodyEncoding === 'base64' ? Buffer.from(body, 'base64').toString('utf8') : body;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The time a table gives a body: its field's value (a string, or a number as its text), else `otherwise`. */
function actionTimeOf(table: ResolvedActionTime, body: string, bodyEncoding: 'utf8' | 'base64'): number {
  const document = documentOf(body, bodyEncoding);
  if (document === undefined) return table.otherwise;
  const value = resolveJsonPointer(document, table.pointer);
  // An object, an array, a boolean or null names no destination. String(1.5) is "1.5", as JSON wrote it.
  const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
  // Own keys only: a value "constructor" or "toString" must not find Object.prototype's.
  return text !== undefined && Object.hasOwn(table.seconds, text) ? (table.seconds[text] as number) : table.otherwise;
}

/**
 * The lease of one record of `route`: the route's one action time, or, with a per-destination
 * table, the time of the value its body's field holds (`otherwise` for any other value, a
 * missing field, or a body that is not JSON), times LEASE_FACTOR, with the action's deadline a
 * margin before it (leaseMarginSeconds). Never longer than the route's `leaseSeconds`, the
 * longest, which the executor's timeout and the TTL cover are sized by.
 * @param body the body as the record and its work message keep it, in `bodyEncoding`
 */
export function recordLease(
  route: Pick<ResolvedRoute, 'actionTimeSeconds' | 'actionTime'>,
  body: string,
  bodyEncoding: 'utf8' | 'base64' = 'utf8',
): LeaseTimes {
  return leaseOfActionTime(route.actionTime === undefined ? route.actionTimeSeconds : actionTimeOf(route.actionTime, body, bodyEncoding));
}
