/**
 * The executor's writes on the events table. Each one is a transition from
 * record-transitions.ts; this class only sends them and reads what stood in the way.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { EventRecord, Payload } from '../domain/event-record.ts';
import type {
  DeadLetterWrite,
  DeferOutcome,
  ExecutionLogEntry,
  ExecutionStore,
  FencedWrite,
  LeaseOutcome,
  LeaseRequest,
  ParkResult,
  RecordRef,
} from '../ports/execution-store.ts';
import { conditionalUpdate } from './conditional-write.ts';
import type { ConditionalOutcome } from './conditional-write.ts';
import { ROUTE_STATE_SK, routeStatePk } from './dynamodb-route-state-store.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { fromRecordItem } from './record-item.ts';
import { RECORD_SK, recordPk } from './record-keys.ts';
import { rememberTaken, seenKey } from './replay-memory.ts';
import { TAKEOVER_MARGIN_MS, acquireLease, clockMargins, complete, deferForRate, deferLeased, fail, failExhausted, markDeadLettered, park, redrive, release, unpark } from './record-transitions.ts';
import type { ClockMargins, Transition } from './record-transitions.ts';
import { CLOCK_SKEW_SECONDS } from '../config/route-config.ts';

/**
 * Sort key of a log entry: grouped by record generation, then in time order. The last part
 * is unique, so two entries of the same millisecond never overwrite each other.
 */
export function logSortKey(entry: Pick<ExecutionLogEntry, 'receivedAt' | 'startedAt' | 'attempt' | 'kind'>, unique: string): string {
  const pad = (n: number, width: number): string => String(n).padStart(width, '0');
  return `LOG#${pad(entry.receivedAt, 13)}#${pad(entry.startedAt, 13)}#${pad(entry.attempt, 4)}#${entry.kind}#${unique}`;
}

/**
 * Whether another worker's lease still holds by our clock: it is over only twice the clock
 * bound after its end (TAKEOVER_MARGIN_MS), as acquireLease's condition has it.
 */
export function leaseHolds(leaseUntil: number | undefined, nowMs: number, takeoverMs = TAKEOVER_MARGIN_MS): boolean {
  return (leaseUntil ?? 0) > nowMs - takeoverMs;
}

/** What stood in the way of parking, read from the item the failed write returned. */
function blockedPark(
  old: Record<string, unknown> | undefined,
  ref: RecordRef & { readonly nowMs: number; readonly fingerprint: string },
  takeoverMs: number,
): ParkResult {
  if (old === undefined) return { kind: 'missing' };
  const record = fromRecordItem(old);
  if (record.receivedAt !== ref.receivedAt || record.expiresAt <= Math.floor(ref.nowMs / 1000)) return { kind: 'missing' };
  if (record.fingerprint !== ref.fingerprint) return { kind: 'forged', record };
  if (record.status === RECORD_STATUS.completed) return { kind: 'completed', record };
  if (record.status === RECORD_STATUS.failed) return { kind: 'failed', record };
  if (record.status === RECORD_STATUS.parked) return { kind: 'already-parked' };
  if (record.status === RECORD_STATUS.executing && leaseHolds(record.leaseUntil, ref.nowMs, takeoverMs)) return { kind: 'locked', record };
  // Nothing in the park's condition is left to refuse it: lease and run as usual, and let the lease judge.
  return { kind: 'route-active' };
}

/** What stood in the way of a lease, read from the item the failed write returned. */
function blockedLease(old: Record<string, unknown> | undefined, ref: LeaseRequest, nowMs: number, takeoverMs: number): Exclude<LeaseOutcome, { kind: 'leased' }> {
  if (old === undefined) return { kind: 'missing' };
  const record = fromRecordItem(old);
  if (record.receivedAt !== ref.receivedAt || record.expiresAt <= Math.floor(nowMs / 1000)) return { kind: 'missing' };
  if (ref.fingerprint !== undefined && record.fingerprint !== ref.fingerprint) return { kind: 'forged', record };
  if (record.status === RECORD_STATUS.completed) return { kind: 'completed', record };
  if (record.status === RECORD_STATUS.failed) return { kind: 'failed', record };
  if (record.status === RECORD_STATUS.executing && leaseHolds(record.leaseUntil, nowMs, takeoverMs)) return { kind: 'locked', record };
  // A person skipped this run's place: it comes back in a moment, and finds its place at the line's end.
  if (ref.linePlace !== undefined && old.lineSkipped === ref.linePlace) return { kind: 'locked', record };
  return { kind: 'exhausted', record };
}

export class DynamoDbExecutionStore implements ExecutionStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #margins: ClockMargins;

  /** @param clockSkewSeconds the deployment's clock bound (ResolvedConfig.clockSkewSeconds). @default CLOCK_SKEW_SECONDS */
  constructor(client: DynamoDBClient, tableName: string, clockSkewSeconds = CLOCK_SKEW_SECONDS) {
    this.#doc = documentClient(client);
    this.#table = tableName;
    this.#margins = clockMargins(clockSkewSeconds);
  }

  #apply(route: string, key: string, transition: Transition, returnOld = false): Promise<ConditionalOutcome> {
    return conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: { pk: recordPk(route, key), sk: RECORD_SK },
      ...transition,
      ...(returnOld ? { ReturnValues: 'ALL_NEW', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } : {}),
    });
  }

  async acquireLease(request: LeaseRequest): Promise<LeaseOutcome> {
    const out = await this.#apply(request.route, request.key, acquireLease({ ...request, takeoverMs: this.#margins.takeoverMs }), true);
    if (!out.ok) return blockedLease(out.old, request, request.nowMs, this.#margins.takeoverMs);
    // Our own lease, also when the SDK's retry of it met the lease its first attempt wrote:
    // the item it returns is the item as the lease left it.
    if (out.item === undefined) throw new Error('acquireLease returned no record');
    return { kind: 'leased', record: fromRecordItem(out.item) };
  }

  async deferForRate(request: RecordRef & { readonly nowMs: number; readonly untilMs: number; readonly fingerprint: string }): Promise<DeferOutcome> {
    const out = await this.#apply(request.route, request.key, deferForRate({ ...request, takeoverMs: this.#margins.takeoverMs }), true);
    if (out.ok) return { kind: 'deferred' };
    const blocked = blockedLease(out.old, { ...request, leaseMs: 0, token: '', maxAttempts: Number.POSITIVE_INFINITY }, request.nowMs, this.#margins.takeoverMs);
    // The item as it stood shows nothing that refuses (the deferral reads no budget): another
    // write moved it between the check and its read. The message goes back for a moment.
    return blocked.kind === 'exhausted' ? { kind: 'locked', record: blocked.record } : blocked;
  }

  async complete(write: FencedWrite & { readonly result: string; readonly operationFingerprint: string; readonly requestId?: string }): Promise<boolean> {
    return (await this.#apply(write.route, write.key, complete(write))).ok;
  }

  async release(write: FencedWrite & { readonly error: string }): Promise<boolean> {
    return (await this.#apply(write.route, write.key, release(write))).ok;
  }

  async deferLeased(write: FencedWrite & { readonly receivedAt: number; readonly untilMs: number }): Promise<boolean> {
    return (await this.#apply(write.route, write.key, deferLeased(write))).ok;
  }

  async fail(write: FencedWrite & DeadLetterWrite & { readonly receivedAt: number }): Promise<boolean> {
    return (await this.#apply(write.route, write.key, fail(write))).ok;
  }

  async failExhausted(
    ref: RecordRef & DeadLetterWrite & { readonly nowMs: number; readonly maxAttempts: number; readonly fingerprint: string },
  ): Promise<boolean> {
    return (await this.#apply(ref.route, ref.key, failExhausted({ ...ref, takeoverMs: this.#margins.takeoverMs }))).ok;
  }

  async get(route: string, key: string): Promise<EventRecord | undefined> {
    const out = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: recordPk(route, key), sk: RECORD_SK }, ConsistentRead: true }),
    );
    return out.Item === undefined ? undefined : fromRecordItem(out.Item);
  }

  async rememberTaken(route: string, fingerprint: string, receivedAt: number): Promise<void> {
    await this.#doc.send(new UpdateCommand({ TableName: this.#table, Key: seenKey(route, fingerprint), ...rememberTaken({ receivedAt }) }));
  }

  async markDeadLettered(route: string, key: string, deadLetterId: string): Promise<void> {
    // Refused: the record moved on (redriven already, or another failure named a new copy).
    await this.#apply(route, key, markDeadLettered({ deadLetterId }));
  }

  async redrive(
    ref: RecordRef & { readonly nowMs: number; readonly deadLetterId: string; readonly stampedAtMs: number; readonly keepUntilSeconds: number },
  ): Promise<boolean> {
    return (await this.#apply(ref.route, ref.key, redrive({ ...ref, stampMarginMs: this.#margins.deadLetterStampMs }))).ok;
  }

  /**
   * Parks the record, then reads the route's state: parking is kept only while the route is still
   * paused. A transaction cannot check both at once here: DynamoDB's multi-Region strong
   * consistency refuses TransactWriteItems (Developer Guide, "How DynamoDB global tables work",
   * MRSC: transactions are not supported; docs/architecture.md, "Several Regions"), and the events
   * table of a deployment of several Regions is such a table. The read comes after the park in the
   * one linearizable order of the table: a resume whose state write came before it is seen, and
   * we take the record back ourselves (its sweep of the parked index may have passed before our
   * park landed); a resume after it sweeps with our park already in place (and the reconciler's
   * parked phase finds anything the index showed late).
   */
  async park(
    request: RecordRef & { readonly nowMs: number; readonly ttlSeconds: number; readonly payload: Payload; readonly fingerprint: string; readonly lineEntity?: string },
  ): Promise<ParkResult> {
    const out = await this.#apply(request.route, request.key, park({ ...request, takeoverMs: this.#margins.takeoverMs }));
    if (!out.ok) {
      const blocked = blockedPark(out.old, request, this.#margins.takeoverMs);
      if (blocked.kind !== 'already-parked') return blocked;
    }
    const state = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: routeStatePk(request.route), sk: ROUTE_STATE_SK }, ConsistentRead: true }),
    );
    if (state.Item?.state === 'paused') return out.ok ? { kind: 'parked' } : { kind: 'already-parked' };
    // why: docs/architecture.md#pause-parks (resumed meanwhile: unpark, then lease and run as usual)
    await this.#apply(request.route, request.key, unpark({ receivedAt: request.receivedAt, nowMs: request.nowMs }));
    return { kind: 'route-active' };
  }

  async parkInLine(
    request: RecordRef & { readonly nowMs: number; readonly ttlSeconds: number; readonly payload: Payload; readonly fingerprint: string; readonly entity: string; readonly place: number },
  ): Promise<ParkResult> {
    const out = await this.#apply(request.route, request.key, park({ ...request, takeoverMs: this.#margins.takeoverMs, waitingTurn: { entity: request.entity, place: request.place } }));
    if (out.ok) return { kind: 'parked' };
    const blocked = blockedPark(out.old, request, this.#margins.takeoverMs);
    return blocked.kind === 'already-parked' ? { kind: 'parked' } : blocked;
  }

  async unpark(ref: RecordRef, nowMs: number): Promise<boolean> {
    return (await this.#apply(ref.route, ref.key, unpark({ receivedAt: ref.receivedAt, nowMs }))).ok;
  }

  async appendLog(entry: ExecutionLogEntry): Promise<void> {
    await this.#doc.send(
      new PutCommand({
        TableName: this.#table,
        Item: { pk: recordPk(entry.route, entry.key), sk: logSortKey(entry, randomUUID().slice(0, 8)), ...entry },
      }),
    );
  }
}
