/**
 * The rate gate of a route (ports/rate-gate.ts) on the events table: one item per route, pk
 * ROUTE#<route>, sk RATE, beside the route's state. It is GCRA without a burst: `nextAt` is the
 * earliest instant the next run may start, and an admission is one conditional UpdateItem,
 *
 *   nextAt <= now  ->  nextAt = now + interval
 *
 * so two admissions are always at least the interval apart by the admitting workers' clocks. The
 * clocks of two Lambdas may differ (Amazon Time Sync keeps them within milliseconds; the
 * protocol's safety margins assume the much larger configured bound): the spacing in true time
 * is the interval less their difference. A rate limit protects a downstream's throughput, not an
 * invariant of money, so it takes the clocks as they are rather than widening every interval by
 * twice the bound.
 *
 * A refusal returns the item as it stood (ALL_OLD), and the refused work reserves a return slot,
 * `returnAt`: its delayed wake-up comes back then, one interval after the slot before it, so a
 * backlog of n waiting runs comes back spread over n intervals instead of all at once at
 * `nextAt` (where all but one would be refused again). The slot is a hint, not a promise: the
 * run that comes back asks the gate again. A slot past SQS's longest delay (900 s) is not
 * reserved: that work comes back after the longest delay and reserves its slot then.
 *
 * Every admission carries the write nonce (conditional-write.ts): the SDK's retry of an
 * admission that committed and lost its answer meets its own write and counts as admitted. A
 * write on one item takes at most 1,000 write units a second (DynamoDB Developer Guide, "Best
 * practices for designing and using partition keys effectively"), which bounds the limit a
 * route may set (MAX_RATE_PER_SECOND).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ResolvedRateLimit } from '../config/resolve-config.ts';
import { SQS_MAX_DELAY_SECONDS } from '../config/route-config.ts';
import type { RateDecision, RateGate } from '../ports/rate-gate.ts';
import { WRITE_ID, WRITE_ID_VALUE, conditionalUpdate, newWriteId } from './conditional-write.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { routeStatePk } from './dynamodb-route-state-store.ts';

export const RATE_GATE_SK = 'RATE';

/** Tries at reserving a return slot before a refused run takes one near it without a reservation. */
const RESERVE_TRIES = 3;

export class DynamoDbRateGate implements RateGate {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #random: () => number;

  /** @param random spreads the return of work that lost every race for a slot. @default Math.random */
  constructor(client: DynamoDBClient, tableName: string, random: () => number = Math.random) {
    this.#doc = documentClient(client);
    this.#table = tableName;
    this.#random = random;
  }

  async admit(route: string, limit: ResolvedRateLimit, nowMs: number): Promise<RateDecision> {
    const key = { pk: routeStatePk(route), sk: RATE_GATE_SK };
    const admitted = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: key,
      ConditionExpression: 'attribute_not_exists(nextAt) OR nextAt <= :now',
      UpdateExpression: `SET nextAt = :next, route = :route, ${WRITE_ID} = ${WRITE_ID_VALUE} ADD admissions :one`,
      ExpressionAttributeValues: { ':now': nowMs, ':next': nowMs + limit.intervalMs, ':route': route, ':one': 1, [WRITE_ID_VALUE]: newWriteId() },
    });
    if (admitted.ok) return { admitted: true };
    let stood = admitted.old;
    for (let tries = 0; tries < RESERVE_TRIES; tries++) {
      const nextAt = numberOr(stood?.nextAt, nowMs);
      const seen = stood?.returnAt;
      const slot = Math.max(nextAt, numberOr(seen, 0));
      // Beyond the longest delay: come back then, and reserve a slot from there.
      if (slot - nowMs > SQS_MAX_DELAY_SECONDS * 1000) return { admitted: false, retryAtMs: nowMs + SQS_MAX_DELAY_SECONDS * 1000 };
      const reserved = await conditionalUpdate(this.#doc, {
        TableName: this.#table,
        Key: key,
        ConditionExpression: seen === undefined ? 'attribute_not_exists(returnAt)' : 'returnAt = :seen',
        UpdateExpression: 'SET returnAt = :after ADD refusals :one',
        ExpressionAttributeValues: { ':after': slot + limit.intervalMs, ':one': 1, ...(seen === undefined ? {} : { ':seen': seen }) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      if (reserved.ok) return { admitted: false, retryAtMs: slot };
      stood = reserved.old;
    }
    // Every try lost to another refused run: come back somewhere in the next few intervals.
    const nextAt = numberOr(stood?.nextAt, nowMs);
    return { admitted: false, retryAtMs: Math.max(nextAt, numberOr(stood?.returnAt, 0)) + this.#random() * RESERVE_TRIES * limit.intervalMs };
  }
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}
