/**
 * The rate gate of a route (ports/rate-gate.ts) on the events table: one item per route, pk
 * ROUTE#<route>, sk RATE. GCRA without a burst, handing out start slots `step` apart
 * (docs/architecture.md#rate-gate). An admission is one conditional UpdateItem with the write nonce:
 *
 *   idle:  nextAt <= earliest         ->  slot = earliest, nextAt = earliest + step
 *   busy:  nextAt = seen <= latest    ->  slot = seen,     nextAt = seen + step
 *
 * The idle form, refused, returns the item (ALL_OLD), which gives the busy form its `seen`. Refused
 * work reserves a return slot, `returnAt`, one step after the last, unless past SQS's 900 s delay
 * (docs/architecture.md#rate-deferral).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ResolvedRateLimit } from '../config/resolve-config.ts';
import { SQS_MAX_DELAY_SECONDS } from '../config/route-config.ts';
import { rateSlotStepMs } from '../ports/rate-gate.ts';
import type { RateDecision, RateGate, SlotWindow } from '../ports/rate-gate.ts';
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

  async admit(route: string, limit: ResolvedRateLimit, nowMs: number, window: SlotWindow): Promise<RateDecision> {
    const key = { pk: routeStatePk(route), sk: RATE_GATE_SK };
    const step = rateSlotStepMs(limit);
    const earliest = nowMs + window.leadMs;
    const latest = nowMs + Math.max(window.leadMs, window.maxWaitMs);
    const take = async (condition: string, slot: number, seen?: number) => {
      const out = await conditionalUpdate(this.#doc, {
        TableName: this.#table,
        Key: key,
        ConditionExpression: condition,
        UpdateExpression: `SET nextAt = :next, route = :route, ${WRITE_ID} = ${WRITE_ID_VALUE} ADD admissions :one`,
        ExpressionAttributeValues: {
          ':next': slot + step,
          ':route': route,
          ':one': 1,
          [WRITE_ID_VALUE]: newWriteId(),
          ...(seen === undefined ? { ':earliest': earliest } : { ':seen': seen }),
        },
      });
      return out.ok ? ({ ok: true } as const) : ({ ok: false, old: out.old } as const);
    };
    const idle = await take('attribute_not_exists(nextAt) OR nextAt <= :earliest', earliest);
    if (idle.ok) return { admitted: true, startAtMs: earliest };
    let stood = idle.old;
    for (let tries = 0; tries < RESERVE_TRIES; tries++) {
      const seen = numberOr(stood?.nextAt, earliest);
      if (seen > latest) break;
      const busy = await take('nextAt = :seen', Math.max(seen, earliest), seen);
      if (busy.ok) return { admitted: true, startAtMs: Math.max(seen, earliest) };
      stood = busy.old;
    }
    return this.#refuse(key, step, nowMs, stood);
  }

  /** A refusal: the work reserves its return slot, one step after the last one reserved. */
  async #refuse(key: Record<string, string>, step: number, nowMs: number, current: Record<string, unknown> | undefined): Promise<RateDecision> {
    let stood = current;
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
        ExpressionAttributeValues: { ':after': slot + step, ':one': 1, ...(seen === undefined ? {} : { ':seen': seen }) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      if (reserved.ok) return { admitted: false, retryAtMs: slot };
      stood = reserved.old;
    }
    // Every try lost to another refused run: come back somewhere in the next few intervals.
    const nextAt = numberOr(stood?.nextAt, nowMs);
    return { admitted: false, retryAtMs: Math.max(nextAt, numberOr(stood?.returnAt, 0)) + this.#random() * RESERVE_TRIES * step };
  }
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}
