/**
 * A person's side of ordering per entity (issue 24): `retryproof order show` and `order skip`.
 *
 * A person names a line by its route and the entity as the route's `orderBy` reads it from a
 * body (`cus_123`); the table names it by a hash of the two (domain/entity-order.ts). A line
 * stands still only behind a head that does not complete, and only one head waits for a person:
 * a FAILED one. Its waiters are PARKED, and the reconciler flags them `line-blocked`. A person
 * either fixes the cause and redrives the head (it runs at its place, and its completion moves
 * the line on by itself), or skips it here: the cursor moves past it, and the next waiter is
 * woken as the executor wakes one after a completion (executor/wake-waiter.ts, the one copy).
 * The skipped record stays FAILED; redriven later, it takes a place at the end of its line.
 */
import { MAX_ENTITY_LENGTH, entityHash } from '../domain/entity-order.ts';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { RecordStatus } from '../domain/event-record.ts';
import { wakeWaiter } from '../executor/wake-waiter.ts';
import type { WakeDeps } from '../executor/wake-waiter.ts';
import type { EntityOrder, LineHead, LineView, Waiter } from '../ports/entity-order.ts';
import type { RouteStateStore } from '../ports/route-state-store.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import { DynamoDbEntityOrder } from '../store/dynamodb-entity-order.ts';
import { DynamoDbExecutionStore } from '../store/dynamodb-execution-store.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';
import { sentQueueOf } from './route-control.ts';
import type { RouteControlOptions } from './route-control.ts';

/** Places `order show` lists when not told. */
export const DEFAULT_LINE_LIMIT = 20;

/** Why the head holds its line: what it waits for, and who moves it. */
export const HEAD_STATE = {
  /** FAILED: only a person moves the line on (a redrive, or `order skip`). */
  failed: 'failed',
  /** RECEIVED with attempts spent: its next try comes back from the queue. */
  retrying: 'retrying',
  /** RECEIVED, no attempt yet: its message is on the queue (or waits for the route's rate limit). */
  queued: 'queued',
  /** EXECUTING: a worker runs it now. */
  running: 'running',
  /** PARKED on a paused route: `routes resume` sends it. */
  paused: 'paused',
  /** PARKED on an active route: its wake-up was sent, or is due (the reconciler's next run sends a lost one). */
  parked: 'parked',
} as const;
export type HeadState = (typeof HEAD_STATE)[keyof typeof HEAD_STATE];

/** The record that holds a line, and why. */
export interface HeldBy extends LineHead {
  readonly state: HeadState;
  /** What it waits for and what moves it, for a person. */
  readonly why: string;
  readonly lastError?: string;
}

/** A line as `order show` prints it. */
export interface LineShow {
  readonly route: string;
  /** The entity as the person typed it. */
  readonly entity: string;
  /** The entity as the table names it (a record's `lineEntity`). */
  readonly entityHash: string;
  /** The place whose turn it is. */
  readonly next: number;
  /** From the cursor on, at most the limit. */
  readonly places: LineView['places'];
  /** More places follow the ones listed. */
  readonly more: boolean;
  /**
   * What holds the line: the first place read whose record neither completed nor is gone (a
   * turn passes those). Absent when none of the places read does: the line is empty, or done.
   */
  readonly head?: HeldBy;
}

export type SkipOutcome =
  /** The FAILED head was skipped; `woken`: the next record, parked waiting, was sent its wake-up. */
  | { readonly kind: 'skipped'; readonly skipped: LineHead; readonly woken?: Waiter }
  /** Nothing held the cursor's place (its record completed, or is gone): the cursor moved past it. */
  | { readonly kind: 'passed'; readonly woken?: Waiter }
  /** Nothing changed: the head is not FAILED, or the line holds no work. */
  | { readonly kind: 'refused'; readonly reason: string };

/** A route the receiver does not serve, one without `orderBy`, or an entity no body could name. */
export class LineSelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LineSelectionError';
  }
}

export interface LineControlDeps {
  readonly order: EntityOrder;
  /** The record read and its unpark, for the head's details and the wake. */
  readonly store: WakeDeps['store'];
  readonly states: RouteStateStore;
  /** The work queue a woken record's message goes to. */
  readonly queue: WorkQueue;
  /** The configured routes: which are ordered, and each one's TTL. */
  readonly config: readonly { readonly name: string; readonly orderBy?: string; readonly ttlSeconds: number }[];
  /** The routes the receiver serves. @default - the configured ones */
  readonly routes?: readonly string[];
  readonly now: () => number;
}

export interface LineControl {
  /**
   * The line of `entity` (as the route's `orderBy` reads it from a body) from its cursor on.
   * @param limit the most places listed @default DEFAULT_LINE_LIMIT
   * @throws LineSelectionError when the route is not served or not ordered, or the entity is empty or too long
   */
  showLine(route: string, entity: string, limit?: number): Promise<LineShow>;
  /**
   * Moves the line past its FAILED (or gone) head, and wakes the next record when it waits parked.
   * Refuses (and changes nothing) when the head is anything else, or the line holds no work.
   * @throws LineSelectionError as showLine
   */
  skipHead(route: string, entity: string): Promise<SkipOutcome>;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Why a head that neither completed nor is gone holds its line, and what moves it on. */
function stateOf(route: string, status: RecordStatus, attempts: number, paused: boolean): { state: HeadState; why: string } {
  switch (status) {
    case RECORD_STATUS.failed:
      return {
        state: HEAD_STATE.failed,
        why: `FAILED after ${plural(attempts, 'attempt')}: fix the cause and redrive it (the line then moves on by itself), or skip it with retryproof order skip`,
      };
    case RECORD_STATUS.executing:
      return { state: HEAD_STATE.running, why: `running (attempt ${attempts})` };
    case RECORD_STATUS.parked:
      return paused
        ? { state: HEAD_STATE.paused, why: `PARKED: route ${route} is paused; retryproof routes resume ${route} sends it` }
        : { state: HEAD_STATE.parked, why: "PARKED on an active route: its wake-up was sent, or the reconciler's next run sends it" };
    default:
      return attempts > 0
        ? { state: HEAD_STATE.retrying, why: `retrying: ${plural(attempts, 'attempt')} spent, the next one comes back from the queue` }
        : { state: HEAD_STATE.queued, why: 'RECEIVED: its message is on the queue, no attempt yet' };
  }
}

export function lineControl(deps: LineControlDeps): LineControl {
  const served = deps.routes ?? deps.config.map((r) => r.name);

  /** The route's settings and the line's hash, or a LineSelectionError naming what is wrong. */
  const lineOf = (route: string, entity: string): { ttlSeconds: number; hash: string } => {
    if (!served.includes(route)) throw new LineSelectionError(`route "${route}" is not configured; configured routes: ${served.join(', ')}`);
    const config = deps.config.find((r) => r.name === route);
    if (config?.orderBy === undefined) {
      const ordered = deps.config.filter((r) => r.orderBy !== undefined && served.includes(r.name)).map((r) => r.name);
      throw new LineSelectionError(
        `route "${route}" is not ordered per entity (it has no orderBy), so it has no lines; ${ordered.length === 0 ? 'no route is' : `ordered routes: ${ordered.join(', ')}`}`,
      );
    }
    if (entity === '') throw new LineSelectionError(`the entity is empty: give the value whose line route "${route}" keeps (${config.orderBy}), such as a customer id`);
    if (entity.length > MAX_ENTITY_LENGTH) throw new LineSelectionError(`the entity is ${entity.length} characters long; an entity is at most ${MAX_ENTITY_LENGTH}`);
    return { ttlSeconds: config.ttlSeconds, hash: entityHash(route, entity) };
  };

  /** What holds the line at `place`, read from the record itself (fresher than the line's view); undefined when it completed or is gone. */
  const heldBy = async (route: string, place: LineView['places'][number]): Promise<HeldBy | undefined> => {
    const record = await deps.store.get(route, place.key);
    if (record === undefined || record.receivedAt !== place.receivedAt || record.status === RECORD_STATUS.completed) return undefined;
    const paused = record.status === RECORD_STATUS.parked && (await deps.states.get(route)).state === 'paused';
    return {
      place: place.place,
      key: place.key,
      receivedAt: place.receivedAt,
      status: record.status,
      attempts: record.attempts,
      ...(record.lastError === undefined ? {} : { lastError: record.lastError }),
      ...stateOf(route, record.status, record.attempts, paused),
    };
  };

  return {
    async showLine(route, entity, limit = DEFAULT_LINE_LIMIT) {
      const { hash } = lineOf(route, entity);
      const view = await deps.order.view(route, hash, deps.now(), limit + 1);
      const places = view.places.slice(0, limit);
      // The first place whose record neither completed nor is gone: a turn passes the others
      // (a cursor move lost to a crash is repaired by the next reader).
      let head: HeldBy | undefined;
      for (const place of view.places) {
        if (place.status === undefined || place.status === RECORD_STATUS.completed) continue;
        head = await heldBy(route, place);
        if (head !== undefined) break;
      }
      return { route, entity, entityHash: hash, next: view.next, places, more: view.places.length > limit, ...(head === undefined ? {} : { head }) };
    },

    async skipHead(route, entity) {
      const { ttlSeconds, hash } = lineOf(route, entity);
      const line = `route ${route}, entity ${entity}`;
      // A line with no place from its cursor on holds nothing: moving its cursor would skip no one.
      if ((await deps.order.view(route, hash, deps.now(), 1)).places.length === 0) {
        return { kind: 'refused', reason: `the line of ${line} holds no work: nothing to skip` };
      }
      const out = await deps.order.skip(route, hash, deps.now(), ttlSeconds);
      if (out.refused !== undefined) {
        return { kind: 'refused', reason: `${line}: ${out.refused}; retryproof order show ${route} ${entity} says what it waits for` };
      }
      const woken = out.waiter !== undefined && (await wakeWaiter({ store: deps.store, workQueue: deps.queue, now: deps.now }, route, out.waiter)) ? { woken: out.waiter } : {};
      return out.skipped === undefined ? { kind: 'passed', ...woken } : { kind: 'skipped', skipped: out.skipped, ...woken };
    },
  };
}

/** Line control over DynamoDB and SQS, for the CLI: the receiver's table, queues and bucket. */
export function createLineControl(options: RouteControlOptions): LineControl {
  const { config, dynamo } = options;
  return lineControl({
    order: new DynamoDbEntityOrder(dynamo, options.eventsTable, { clockSkewSeconds: config.clockSkewSeconds }),
    store: new DynamoDbExecutionStore(dynamo, options.eventsTable, config.clockSkewSeconds),
    states: new DynamoDbRouteStateStore(dynamo, options.eventsTable),
    // A woken record's body object is renewed before its message leaves, as every person's re-send does.
    queue: sentQueueOf(options),
    config: config.routes,
    routes: options.routes ?? config.routes.map((r) => r.name),
    now: options.now ?? Date.now,
  });
}
