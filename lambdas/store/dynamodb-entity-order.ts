/**
 * The lines of routes ordered per entity (domain/entity-order.ts has the items; why not SQS FIFO:
 * docs/ordering.md#why-not-sqs-fifo). One conditional write on one item at a time, since MRSC
 * refuses transactions (docs/architecture.md#entity-order). Every read is strongly consistent,
 * and every write recognises its own success (a place carries its record's key and receivedAt,
 * the cursor's move a nonce) or is idempotent.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CLOCK_SKEW_SECONDS } from '../config/route-config.ts';
import { CURSOR_SK, FIRST_PLACE, linePartition, placeOfSortKey, placeSortKey } from '../domain/entity-order.ts';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { EntityOrder, LineHead, LineRef, LineView, Turn, Waiter } from '../ports/entity-order.ts';
import { WRITE_ID, WRITE_ID_VALUE, conditionalPut, conditionalUpdate, newWriteId } from './conditional-write.ts';
import { fenceSkip } from './record-transitions.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { fromRecordItem } from './record-item.ts';
import { RECORD_SK, recordPk } from './record-keys.ts';

/** A place is taken by one record; tries past this many taken places in a row mean a storm: the caller retries later. */
const MAX_PLACE_TRIES = 64;
/** A place found expiring more than this before the caller's keep-until is kept on with its record. */
const PLACE_REFRESH_SLACK_SECONDS = 86_400;
/** Places read per page when a record looks for its own. */
const PAGE = 100;

interface PlaceItem {
  readonly place: number;
  readonly key: string;
  readonly receivedAt: number;
  readonly expiresAt: number;
  readonly waiting: boolean;
}

function placeItem(item: Record<string, unknown>): PlaceItem {
  return {
    place: placeOfSortKey(String(item.sk)),
    key: String(item.key),
    receivedAt: Number(item.receivedAt),
    expiresAt: Number(item.expiresAt),
    waiting: item.waiting === true,
  };
}

/** The waiter a place holds: parked waiting for its turn, the place still live. */
function waiterOf(item: PlaceItem | undefined, nowMs: number): Waiter | undefined {
  if (item === undefined || !item.waiting || item.expiresAt < seconds(nowMs)) return undefined;
  return { key: item.key, receivedAt: item.receivedAt };
}

function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

export class OrderPlaceStormError extends Error {
  constructor(route: string, tries: number) {
    super(`no free place in an entity's line of route "${route}" after ${tries} tries`);
    this.name = 'OrderPlaceStormError';
  }
}

export class DynamoDbEntityOrder implements EntityOrder {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  /** How far past its expiry a head's record must be before it counts as gone: twice the clock bound. */
  readonly #goneMarginSeconds: number;

  constructor(client: DynamoDBClient, tableName: string, options: { readonly clockSkewSeconds?: number } = {}) {
    this.#doc = documentClient(client);
    this.#table = tableName;
    this.#goneMarginSeconds = 2 * (options.clockSkewSeconds ?? CLOCK_SKEW_SECONDS);
  }

  async place(ref: LineRef, nowMs: number, expiresAt: number): Promise<number> {
    const pk = linePartition(ref.route, ref.entity);
    const [next, last] = await Promise.all([this.#cursor(pk, nowMs), this.#lastPlace(pk)]);
    // Never below the cursor: a place behind it would run at once, beside the head.
    let place = Math.max(last + 1, next);
    for (let tries = 0; tries < MAX_PLACE_TRIES; tries++, place++) {
      const out = await conditionalPut(this.#doc, {
        TableName: this.#table,
        Item: { pk, sk: placeSortKey(place), key: ref.key, receivedAt: ref.receivedAt, expiresAt, placedAt: nowMs },
        // An expired place is free: the line it belonged to is over.
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowSeconds',
        ExpressionAttributeValues: { ':nowSeconds': seconds(nowMs) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      if (out.ok) return place;
      // Our own first attempt, committed with its answer lost: the place holds our record.
      if (out.old !== undefined && out.old.key === ref.key && Number(out.old.receivedAt) === ref.receivedAt) return place;
    }
    throw new OrderPlaceStormError(ref.route, MAX_PLACE_TRIES);
  }

  async placeIfAbsent(ref: LineRef, nowMs: number, expiresAt: number): Promise<number> {
    const pk = linePartition(ref.route, ref.entity);
    return (await this.#find(pk, await this.#cursor(pk, nowMs), ref))?.place ?? (await this.place(ref, nowMs, expiresAt));
  }

  async turn(ref: LineRef, nowMs: number, expiresAt: number): Promise<Turn> {
    const pk = linePartition(ref.route, ref.entity);
    let next = await this.#cursor(pk, nowMs);
    const found = await this.#find(pk, next, ref);
    let own = found?.place;
    if (found !== undefined && found.expiresAt < expiresAt - PLACE_REFRESH_SLACK_SECONDS) {
      // An old record still in the line: its place lives on with it, or the line would pass it.
      await this.#keepPlace(pk, found.place, ref, expiresAt);
    }
    if (own === undefined) {
      // why: docs/architecture.md#a-place-follows-its-message (done or failed work takes no place)
      const record = await this.#record(ref.route, ref.key);
      const runnable =
        record !== undefined &&
        record.receivedAt === ref.receivedAt &&
        (record.status === RECORD_STATUS.received || record.status === RECORD_STATUS.parked || record.status === RECORD_STATUS.executing);
      if (!runnable) {
        // A copy of the record that moved the line: its worker may have died before the wake-up.
        const waiter = await this.#waiterAt(pk, next, nowMs);
        return waiter === undefined ? { kind: 'none' } : { kind: 'none', waiter };
      }
      own = await this.place(ref, nowMs, expiresAt);
    }
    // Each pass moves the cursor on by one at least, so this ends within own - next passes.
    for (;;) {
      if (own <= next) return { kind: 'turn', place: own };
      const head = await this.#head(ref.route, pk, next, nowMs);
      if (head !== undefined) return { kind: 'wait', place: own, head };
      // The head completed, or is gone: the cursor move its worker should have made.
      await this.#move(pk, next, nowMs, expiresAt);
      next = Math.max(next + 1, await this.#cursor(pk, nowMs));
    }
  }

  async markWaiting(ref: LineRef, place: number, keepUntilSeconds: number): Promise<void> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: linePartition(ref.route, ref.entity), sk: placeSortKey(place) },
          ConditionExpression: '#key = :key AND receivedAt = :receivedAt',
          // why: docs/architecture.md#a-pause-keeps-the-line
          UpdateExpression: 'SET waiting = :true, expiresAt = :keep',
          ExpressionAttributeNames: { '#key': 'key' },
          ExpressionAttributeValues: { ':key': ref.key, ':receivedAt': ref.receivedAt, ':true': true, ':keep': keepUntilSeconds },
        }),
      );
    } catch (err) {
      // Not our place any more (it expired and was taken): the record finds its place again when woken.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
    await this.#extend(linePartition(ref.route, ref.entity), keepUntilSeconds);
  }

  async keep(ref: LineRef, nowMs: number, keepUntilSeconds: number): Promise<void> {
    const pk = linePartition(ref.route, ref.entity);
    const found = await this.#find(pk, await this.#cursor(pk, nowMs), ref);
    if (found !== undefined) await this.#keepPlace(pk, found.place, ref, keepUntilSeconds);
    await this.#extend(pk, keepUntilSeconds);
  }

  async advance(ref: LineRef, place: number, nowMs: number, ttlSeconds: number): Promise<Waiter | undefined> {
    const pk = linePartition(ref.route, ref.entity);
    // A record placed twice (a copy raced its creator) holds the next place too: move past it.
    for (let at = place; ; at++) {
      await this.#move(pk, at, nowMs, seconds(nowMs) + ttlSeconds);
      const next = await this.#placeAt(pk, at + 1);
      const ours = next !== undefined && next.key === ref.key && next.receivedAt === ref.receivedAt;
      if (!ours || at - place >= MAX_PLACE_TRIES) return waiterOf(next, nowMs);
    }
  }

  async skip(route: string, entity: string, nowMs: number, ttlSeconds: number): Promise<{ skipped?: LineHead; waiter?: Waiter; refused?: string }> {
    const pk = linePartition(route, entity);
    const next = await this.#cursor(pk, nowMs);
    const head = await this.#head(route, pk, next, nowMs);
    if (head === undefined) {
      // Nothing holds the line at its cursor: move it on as a reader would.
      await this.#move(pk, next, nowMs, seconds(nowMs) + ttlSeconds);
      const waiter = await this.#waiterAt(pk, next + 1, nowMs);
      return waiter === undefined ? {} : { waiter };
    }
    // Fenced first, so a redrive landing before the move runs nothing here; fenced already: finish it.
    const fenced = await this.#fenceSkip(route, head);
    if (!fenced) {
      return { refused: `the head of the line (place ${head.place}, key ${head.key}) is ${head.status}, not FAILED: only a failed head is skipped` };
    }
    await this.#move(pk, next, nowMs, seconds(nowMs) + ttlSeconds);
    const waiter = await this.#waiterAt(pk, next + 1, nowMs);
    return { skipped: head, ...(waiter === undefined ? {} : { waiter }) };
  }

  async view(route: string, entity: string, nowMs: number, limit: number): Promise<LineView> {
    const pk = linePartition(route, entity);
    const next = await this.#cursor(pk, nowMs);
    const places: LineView['places'][number][] = [];
    for await (const item of this.#places(pk, next)) {
      if (places.length >= limit) break;
      const record = await this.#record(route, item.key);
      const same = record !== undefined && record.receivedAt === item.receivedAt;
      places.push({ place: item.place, key: item.key, receivedAt: item.receivedAt, waiting: item.waiting, ...(same ? { status: record.status, attempts: record.attempts } : {}) });
    }
    return { next, places };
  }

  /**
   * The place whose turn it is. Without a live cursor item (none yet, or it expired with a line
   * that went quiet): the first live place, or the first of all.
   */
  async #cursor(pk: string, nowMs: number): Promise<number> {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: { pk, sk: CURSOR_SK }, ConsistentRead: true }));
    const item = out.Item;
    if (item !== undefined && Number(item.expiresAt) >= seconds(nowMs)) return Number(item.next);
    for await (const place of this.#places(pk, FIRST_PLACE)) {
      if (place.expiresAt >= seconds(nowMs)) return place.place;
    }
    return FIRST_PLACE;
  }

  /** The highest place ever taken in the line (expired ones too), 0 when none. */
  async #lastPlace(pk: string): Promise<number> {
    const out = await this.#doc.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :seq)',
        ExpressionAttributeValues: { ':pk': pk, ':seq': 'SEQ#' },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const item = out.Items?.[0];
    return item === undefined ? 0 : placeOfSortKey(String(item.sk));
  }

  /** The places from `from` on, in order, page by page. */
  async *#places(pk: string, from: number): AsyncIterable<PlaceItem> {
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#doc.send(
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': pk, ':from': placeSortKey(from), ':to': 'SEQ#~' },
          Limit: PAGE,
          ConsistentRead: true,
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      );
      for (const item of out.Items ?? []) yield placeItem(item);
      start = out.LastEvaluatedKey;
    } while (start !== undefined);
  }

  /**
   * The record's first place at or after the cursor, if it has one. Filtered by DynamoDB: a long
   * line behind its head costs one request per 1 MB read (about 6,000 places), not one per page
   * of PAGE; the read units still grow with the line (docs/ordering.md, what it costs).
   */
  async #find(pk: string, from: number, ref: LineRef): Promise<PlaceItem | undefined> {
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#doc.send(
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          FilterExpression: '#key = :key AND receivedAt = :receivedAt',
          ExpressionAttributeNames: { '#key': 'key' },
          ExpressionAttributeValues: { ':pk': pk, ':from': placeSortKey(from), ':to': 'SEQ#~', ':key': ref.key, ':receivedAt': ref.receivedAt },
          ConsistentRead: true,
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      );
      const found = out.Items?.[0];
      if (found !== undefined) return placeItem(found);
      start = out.LastEvaluatedKey;
    } while (start !== undefined);
    return undefined;
  }

  /** Moves a record's place's expiry on to `keepUntilSeconds` (never back). */
  async #keepPlace(pk: string, place: number, ref: LineRef, keepUntilSeconds: number): Promise<void> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk, sk: placeSortKey(place) },
          ConditionExpression: '#key = :key AND receivedAt = :receivedAt AND expiresAt < :keep',
          UpdateExpression: 'SET expiresAt = :keep',
          ExpressionAttributeNames: { '#key': 'key' },
          ExpressionAttributeValues: { ':key': ref.key, ':receivedAt': ref.receivedAt, ':keep': keepUntilSeconds },
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  /**
   * What holds the line at `place`: undefined when nothing does (its record completed, or is gone:
   * absent, another generation of the key, or expired twice the clock bound ago). A place not
   * taken at all holds nothing either.
   */
  async #head(route: string, pk: string, place: number, nowMs: number): Promise<LineHead | undefined> {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: { pk, sk: placeSortKey(place) }, ConsistentRead: true }));
    if (out.Item === undefined) return undefined;
    const item = placeItem(out.Item);
    const record = await this.#record(route, item.key);
    if (record === undefined || record.receivedAt !== item.receivedAt) return undefined;
    if (record.expiresAt + this.#goneMarginSeconds < seconds(nowMs)) return undefined;
    if (record.status === RECORD_STATUS.completed) return undefined;
    return { place, key: item.key, receivedAt: item.receivedAt, status: record.status, attempts: record.attempts };
  }

  /** fenceSkip on the head's record; true also when this place was fenced already. */
  async #fenceSkip(route: string, head: LineHead): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: { pk: recordPk(route, head.key), sk: RECORD_SK },
      ...fenceSkip({ receivedAt: head.receivedAt, place: head.place }),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    return out.ok || (out.old?.lineSkipped === head.place && Number(out.old.receivedAt) === head.receivedAt);
  }

  async #record(route: string, key: string) {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: { pk: recordPk(route, key), sk: RECORD_SK }, ConsistentRead: true }));
    return out.Item === undefined ? undefined : fromRecordItem(out.Item);
  }

  /** Cursor `from` -> `from + 1`, if it still stands at `from` (or stands nowhere: no live cursor item). */
  async #move(pk: string, from: number, nowMs: number, keepUntilSeconds: number): Promise<void> {
    const writeId = newWriteId();
    await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: { pk, sk: CURSOR_SK },
      ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowSeconds OR #next = :from',
      UpdateExpression: `SET #next = :to, expiresAt = :keep, movedAt = :now, ${WRITE_ID} = ${WRITE_ID_VALUE}`,
      ExpressionAttributeNames: { '#next': 'next' },
      ExpressionAttributeValues: { ':nowSeconds': seconds(nowMs), ':from': from, ':to': from + 1, ':keep': keepUntilSeconds, ':now': nowMs, [WRITE_ID_VALUE]: writeId },
    });
    // Refused: someone moved it first; the caller reads it again.
  }

  /** The record at `place` when its place is marked waiting. */
  async #waiterAt(pk: string, place: number, nowMs: number): Promise<Waiter | undefined> {
    return waiterOf(await this.#placeAt(pk, place), nowMs);
  }

  async #placeAt(pk: string, place: number): Promise<PlaceItem | undefined> {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: { pk, sk: placeSortKey(place) }, ConsistentRead: true }));
    return out.Item === undefined ? undefined : placeItem(out.Item);
  }

  /** The cursor lives at least as long as a waiting place: a line with waiting work keeps its place. */
  async #extend(pk: string, keepUntilSeconds: number): Promise<void> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk, sk: CURSOR_SK },
          ConditionExpression: 'attribute_exists(pk) AND expiresAt < :keep',
          UpdateExpression: 'SET expiresAt = :keep',
          ExpressionAttributeValues: { ':keep': keepUntilSeconds },
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }
}
