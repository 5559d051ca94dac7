/**
 * The events table on DynamoDB, as ingest sees it. It only makes SDK calls; the
 * conditions live in record-transitions.ts (and replay-memory.ts) and the decisions in the
 * use case.
 */
import { MARK_ANSWERED_MAX_MS } from '../config/route-config.ts';
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { EventRecord, Payload, StoredAnswer } from '../domain/event-record.ts';
import { ClaimFailedError } from '../ports/event-store.ts';
import type { ClaimResult, IngestEventStore, ResendRequest } from '../ports/event-store.ts';
import { conditionalPut, conditionalUpdate } from './conditional-write.ts';
import { fromRecordItem, toRecordItem } from './record-item.ts';
import { RECORD_SK, recordPk } from './record-keys.ts';
import {
  claimExpiredKey,
  claimKey,
  claimResend,
  excuseFailedClaim,
  excuseRacingCopy,
  forgetReplay,
  keepPayload,
  markAnswered,
  markBreakerTripped,
  recordEnqueueFailure,
} from './record-transitions.ts';
import { seenKey, takenBefore } from './replay-memory.ts';
import { EVENTS_TABLE } from './table-schema.ts';

/** A document client that leaves `undefined` attributes out instead of failing. */
export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** The breaker's count runs on this item: repeatBase set and not COUNT_FROZEN (docs/state-machine.md#the-breakers-count). */
function countRuns(item: Readonly<Record<string, unknown>>): boolean {
  return typeof item.repeatBase === 'number' && item.repeatBase >= 0;
}

/** True when a record item shows an answer below 500 standing with the count running (docs/state-machine.md#the-breakers-count). */
function answerStands(item: Readonly<Record<string, unknown>>): { answered: boolean; answeredAt?: number } {
  const answered = countRuns(item) && typeof item.answerStatus === 'number' && item.answerStatus < 500;
  return answered && typeof item.answeredAt === 'number' ? { answered, answeredAt: item.answeredAt } : { answered };
}

export class DynamoDbEventStore implements IngestEventStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #timeShards: number;

  /**
   * @param options.timeShards the table's byTime partitions an hour; the reconciler's store must
   *   read as many. @default EVENTS_TABLE.timeShards, what a deployment uses
   */
  constructor(client: DynamoDBClient, tableName: string, options: { readonly timeShards?: number } = {}) {
    this.#doc = documentClient(client);
    this.#table = tableName;
    this.#timeShards = options.timeShards ?? EVENTS_TABLE.timeShards;
  }

  #key(route: string, key: string): Record<string, string> {
    return { pk: recordPk(route, key), sk: RECORD_SK };
  }

  /** @throws ClaimFailedError: the SDK gave up; its `uncertain` attempts may have committed. */
  async claimKey(record: EventRecord, nowMs: number): Promise<ClaimResult> {
    // why: docs/architecture.md#write-nonce (claimId finds the SDK's retry of our own claim)
    const claimId = randomUUID();
    const item = { ...toRecordItem(record, { timeShards: this.#timeShards }), claimId };
    const ours = (old: Readonly<Record<string, unknown>>): boolean => old.claimId === claimId && old.receivedAt === record.receivedAt;
    // Two rounds at most, unless deliveries keep replacing the same expired key under us.
    for (let round = 0; round < 3; round++) {
      const out = await this.#claimOnce(record, item, nowMs);
      if (out.ok) {
        if (out.item === undefined) return { kind: 'created' };
        // Our own first attempt created it; the SDK sent the claim again and counted one more hit.
        if (ours(out.item)) return { kind: 'created', retried: true };
        return { kind: 'exists', record: fromRecordItem(out.item), ...answerStands(out.item), attempts: out.attempts };
      }
      if (out.old === undefined) throw new Error('claimKey failed its condition but returned no record');
      const old = fromRecordItem(out.old);
      // Refused by a live record: it has another body (the caller answers 422).
      if (old.expiresAt > Math.floor(nowMs / 1000)) return { kind: 'exists', record: old, ...answerStands(out.old), attempts: out.attempts };
      // Refused by an expired record: start a new generation over it.
      const put = await conditionalPut(this.#doc, {
        TableName: this.#table,
        ...claimExpiredKey(nowMs, item),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      if (put.ok) return { kind: 'created' };
      // Refused by our own put, which committed and lost its answer: the SDK's retry met it.
      if (put.old !== undefined && ours(put.old)) return { kind: 'created', retried: true };
      // Another delivery started the new generation first: this one is its duplicate.
    }
    throw new Error(`claimKey could not claim ${record.route}/${record.key}: its expired record kept being replaced`);
  }

  /**
   * claimKey's UpdateItem, and how many of the SDK's attempts of it may have counted this
   * delivery's hit: the last, and each it retried after an uncertain answer (ClaimResult.attempts).
   */
  async #claimOnce(
    record: EventRecord,
    item: Readonly<Record<string, unknown>>,
    nowMs: number,
  ): Promise<
    | { ok: true; item: Record<string, unknown> | undefined; attempts: number }
    | { ok: false; old: Record<string, unknown> | undefined; attempts: number }
  > {
    const command = new UpdateCommand({
      TableName: this.#table,
      Key: this.#key(record.route, record.key),
      ...claimKey({ item, nowMs }),
      ReturnValues: 'ALL_OLD',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    // Attempts that may have committed (a 5xx, a timeout; a 400 throttle wrote nothing), keyed by
    // amz-sdk-request: a document command can report one attempt's error twice.
    const uncertain = new Set<string>();
    command.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (err) {
          const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
          const attempt = (args.request as { headers?: Record<string, string> } | undefined)?.headers?.['amz-sdk-request'] ?? 'attempt=?';
          if (status === undefined || status >= 500) uncertain.add(attempt);
          throw err;
        }
      },
      { step: 'finalizeRequest', priority: 'low' },
    );
    try {
      const out = await this.#doc.send(command);
      return { ok: true, item: out.Attributes, attempts: 1 + uncertain.size };
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw new ClaimFailedError(uncertain.size, { cause: err });
      // The old item comes back as raw attribute values even through the document client.
      return { ok: false, old: err.Item === undefined ? undefined : unmarshall(err.Item), attempts: 1 + uncertain.size };
    }
  }

  /**
   * One attempt only, within `budgetMs` and MARK_ANSWERED_MAX_MS: the mark is the last write
   * before the answer (docs/architecture.md#resend-mark). The first attempt's error aborts the
   * call before the SDK's retry decides (retryMiddleware.js in @smithy/core gives up on an abort).
   */
  async markAnswered(route: string, key: string, receivedAt: number, markAtMs: number, budgetMs?: () => number): Promise<void> {
    // Read as the request goes out: a mark past the invocation's reserve marks an answer no sender got.
    const budget = Math.min(MARK_ANSWERED_MAX_MS, budgetMs === undefined ? MARK_ANSWERED_MAX_MS : budgetMs());
    if (!(budget > 0)) throw new Error('too little time left to mark the answer');
    const command = new UpdateCommand({ TableName: this.#table, Key: this.#key(route, key), ...markAnswered({ receivedAt, markAtMs }) });
    const oneAttempt = new AbortController();
    // Below the retry middleware: it sees each attempt's end before the retry decision.
    command.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (err) {
          oneAttempt.abort();
          throw err;
        }
      },
      { step: 'finalizeRequest', priority: 'low' },
    );
    try {
      await this.#doc.send(command, { abortSignal: AbortSignal.any([oneAttempt.signal, AbortSignal.timeout(budget)]) });
    } catch (err) {
      // Refused: the count runs already (another copy answered first), or the answer is a 5xx now.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  async excuseRacingCopy(route: string, key: string, receivedAt: number, answeredAt: number, hits = 1): Promise<void> {
    // Refused: the count was frozen or started again since (another answeredAt), or our own retried excuse.
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: this.#key(route, key), ...excuseRacingCopy({ receivedAt, answeredAt, hits }) });
  }

  async excuseFailedClaim(route: string, key: string, hits: number): Promise<void> {
    // Refused: no count runs (nothing of ours is in one), or our own retried excuse.
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: this.#key(route, key), ...excuseFailedClaim({ hits }) });
  }

  async takenBefore(route: string, fingerprint: string, receivedAt: number): Promise<number | undefined> {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: seenKey(route, fingerprint), ConsistentRead: true }));
    return takenBefore(out.Item, receivedAt);
  }

  async forgetReplay(route: string, key: string, receivedAt: number): Promise<void> {
    try {
      await this.#doc.send(new DeleteCommand({ TableName: this.#table, Key: this.#key(route, key), ...forgetReplay({ receivedAt }) }));
    } catch (err) {
      // Refused: it is gone already (our own retried delete, or another copy's), or it is not the replay's record.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  async markBreakerTripped(route: string, key: string, receivedAt: number, nowMs: number): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: this.#key(route, key),
      ...markBreakerTripped({ receivedAt, nowMs }),
    });
    return out.ok;
  }

  async claimResend(route: string, key: string, request: ResendRequest): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: this.#key(route, key),
      ...claimResend({ ...request, includeFailed: false }),
    });
    return out.ok;
  }

  async recordEnqueueFailure(
    route: string,
    key: string,
    receivedAt: number,
    answer: StoredAnswer,
    payload: Payload,
    counting = false,
  ): Promise<void> {
    const attempt = (asCounting: boolean, taken: boolean) =>
      conditionalUpdate(this.#doc, {
        TableName: this.#table,
        Key: this.#key(route, key),
        ...recordEnqueueFailure({ receivedAt, answer, payload, counting: asCounting, taken }),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
    const out = await attempt(counting, false);
    if (out.ok || out.old === undefined) return;
    // Refused because the count started or stopped meanwhile, or a worker took the message the
    // failed send may have landed: the form of the case the record shows.
    const old = out.old;
    if (old.receivedAt !== receivedAt || typeof old.answerStatus !== 'number' || old.answerStatus >= 500) return;
    const taken = old.status !== RECORD_STATUS.received;
    if (taken || countRuns(old) !== counting) await attempt(countRuns(old), taken);
  }

  async keepPayload(route: string, key: string, receivedAt: number, payload: Payload): Promise<void> {
    // Refused: a worker took the record (its message existed), or the payload is kept already.
    await conditionalUpdate(this.#doc, { TableName: this.#table, Key: this.#key(route, key), ...keepPayload({ receivedAt, payload }) });
  }
}

