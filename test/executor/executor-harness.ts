/**
 * The executor use case on DynamoDB Local, one message at a time, with no queue in between:
 * the ingest's message is captured as it is sent, handed to executeMessage with the receive
 * count and SentTimestamp a test picks, and every message the executor sends (a dead-letter
 * copy) is captured too. The executor's DynamoDB client is its own, so a test can make its
 * writes meet AWS's ambiguous answers (test/support/ambiguous-dynamodb.ts) while the ingest's
 * stay plain. The executor's clock is the harness's, moved by `advance`.
 */
import { randomUUID } from 'node:crypto';
import { expect, inject } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Action } from '../../lambdas/actions/action.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { ActionTimeTable, RateLimit, RouteConfig } from '../../lambdas/config/route-config.ts';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';
import { executeMessage } from '../../lambdas/executor/execute-message.ts';
import type { ExecutionReport, ExecutorDeps } from '../../lambdas/executor/execute-message.ts';
import type { ExecutionStore } from '../../lambdas/ports/execution-store.ts';
import type { RateGate } from '../../lambdas/ports/rate-gate.ts';
import type { SendOptions, WorkQueue } from '../../lambdas/ports/work-queue.ts';
import { DynamoDbRateGate } from '../../lambdas/store/dynamodb-rate-gate.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { historyOf, readLogItems } from '../../lambdas/store/execution-history.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { ambiguousDynamoDb } from '../support/ambiguous-dynamodb.ts';
import type { DecideAttempt } from '../support/ambiguous-dynamodb.ts';
import { ingestFixture, SCHEME_ROUTES, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { testConfig } from '../support/test-config.ts';

export const ROUTE = 'standard-webhooks';
/** The queue's redrive policy in these specs. */
export const MAX_RECEIVE_COUNT = 8;

export interface Receive {
  /** @default 1 */
  readonly receiveCount?: number;
  /** SQS's SentTimestamp. @default - the harness's clock now */
  readonly sentAt?: number;
  /** @default - a fresh id */
  readonly messageId?: string;
}

export interface ExecutorHarness {
  /** Ingests a signed delivery; returns its key and the work message the ingest sent. */
  deliver(payload: Record<string, unknown>): Promise<{ key: string; message: WorkMessage }>;
  /** Posts a signed delivery; returns the ingest's status and the message it sent, if any. */
  post(payload: Record<string, unknown>): Promise<{ key: string; status: number | undefined; message: WorkMessage | undefined }>;
  /** One receive of `message` by the executor. */
  run(message: WorkMessage, receive?: Receive): Promise<ExecutionReport>;
  /** The record's item as stored, read consistently. */
  record(key: string): Promise<Record<string, unknown> | undefined>;
  /** Every attempt, as inspect shows it. */
  log(key: string): Promise<Record<string, unknown>[]>;
  /** Every message the executor sent (dead-letter copies, delayed wake-ups), in order. */
  readonly sent: readonly WorkMessage[];
  /** The options of each of those sends, in the same order. */
  readonly sentOptions: readonly SendOptions[];
  /** Moves the executor's clock on. */
  advance(ms: number): void;
  now(): number;
  /** Puts the executor's DynamoDB client back as it was (no more faults). */
  heal(): void;
  readonly deps: ExecutorDeps;
}

export async function executorHarness(options: {
  action: Action;
  /** @default 3 */
  maxAttempts?: number;
  /** The fate of each attempt of each of the executor's DynamoDB calls. @default - every attempt answers */
  decide?: DecideAttempt;
  /** Wraps the executor's store (to watch or slow its calls). @default - the store as it is */
  store?: (store: ExecutionStore) => ExecutionStore;
  /** The route (one of SCHEME_ROUTES, by its scheme's name) whose deliveries run `action`. @default ROUTE */
  route?: string;
  /** That route's action time per destination, in place of its one actionTimeSeconds. @default - its one time */
  actionTime?: ActionTimeTable;
  /** That route's rate limit, enforced by a gate of this harness's own. @default - none */
  rateLimit?: RateLimit;
}): Promise<ExecutorHarness> {
  const route = options.route ?? ROUTE;
  const fromIngest: WorkMessage[] = [];
  const sentOptions: SendOptions[] = [];
  const capture = (into: WorkMessage[]): WorkQueue => ({
    send: (message, sendOptions = {}) => {
      into.push(message);
      if (into !== fromIngest) sentOptions.push(sendOptions);
      return Promise.resolve();
    },
  });
  const maxAttempts = options.maxAttempts ?? 3;
  const timed = (r: (typeof SCHEME_ROUTES)[number]): RouteConfig => {
    if (options.actionTime === undefined) return r;
    const { actionTimeSeconds: _one, ...rest } = r;
    return { ...rest, actionTime: options.actionTime };
  };
  const limited = (r: RouteConfig): RouteConfig => (options.rateLimit === undefined ? r : { ...r, rateLimit: options.rateLimit });
  const routes = SCHEME_ROUTES.map((r) => (r.name === route ? { ...limited(timed(r)), action: 'act', maxAttempts } : { ...r, maxAttempts }));
  const table = inject('eventsTable');
  const ingest = await ingestFixture({ queue: capture(fromIngest), routes, tableName: table });
  const config = resolveConfig(testConfig(routes, { queue: { maxReceiveCount: MAX_RECEIVE_COUNT } }));
  const client = localDynamoClient(inject('dynamoEndpoint'));
  const heal = options.decide === undefined ? () => undefined : ambiguousDynamoDb(client, options.decide);
  const doc = documentClient(localDynamoClient(inject('dynamoEndpoint')));
  const sent: WorkMessage[] = [];
  let clock = Date.now();
  const store = new DynamoDbExecutionStore(client, table);
  const deps: ExecutorDeps = {
    routes: new Map(config.routes.map((r) => [r.name, r])),
    actions: new Map([['act', options.action]]),
    store: options.store === undefined ? store : options.store(store),
    workQueue: capture(sent),
    maxReceiveCount: MAX_RECEIVE_COUNT,
    now: () => clock,
    // A run waiting for its rate-limit slot moves the harness's clock on.
    sleep: (ms) => {
      clock += ms;
      return Promise.resolve();
    },
    random: () => 0,
    // The gate's item is the route's; tests share the table and the route names, so each
    // harness gates under a name of its own.
    ...(options.rateLimit === undefined ? {} : { rateGate: ownGate(new DynamoDbRateGate(client, table, () => 0)) }),
  };
  const record = async (key: string): Promise<Record<string, unknown> | undefined> =>
    (await doc.send(new GetCommand({ TableName: table, Key: { pk: recordPk(route, key), sk: RECORD_SK }, ConsistentRead: true }))).Item;
  const post = async (payload: Record<string, unknown>) => {
    const key = uniqueKey(route);
    const before = fromIngest.length;
    const answer = await ingest.invoke(signedDelivery(route, key, { payload }));
    // The message this delivery made, if it made one; its key is the record's (a scheme that
    // signs no timestamp keys by the body, not by the delivery's id).
    const message = fromIngest.length > before ? fromIngest.at(-1) : undefined;
    return { key: message?.key ?? key, status: answer.statusCode, message };
  };
  return {
    post,
    async deliver(payload) {
      const { key, status, message } = await post(payload);
      expect(status).toBe(202);
      if (message === undefined) throw new Error(`the ingest sent no message for ${key}`);
      return { key, message };
    },
    run: (message, receive = {}) =>
      executeMessage(deps, {
        messageId: receive.messageId ?? randomUUID(),
        body: JSON.stringify(message),
        receiveCount: receive.receiveCount ?? 1,
        sentAt: receive.sentAt ?? clock,
      }),
    record,
    log: async (key) => historyOf(await readLogItems(doc, table, route, key), await record(key)),
    sent,
    sentOptions,
    advance: (ms) => {
      clock += ms;
    },
    now: () => clock,
    heal,
    deps,
  };
}

/** Matches one transition's UpdateItem by a piece of its update expression (as sent, marshalled). */
export function updating(fragment: string): (input: Readonly<Record<string, unknown>>) => boolean {
  return (input) => typeof input.UpdateExpression === 'string' && input.UpdateExpression.includes(fragment);
}

/** The store with its acquireLease wrapped by `lease`; every other call goes to the store as it is. */
export function withLease(
  store: ExecutionStore,
  lease: (request: Parameters<ExecutionStore['acquireLease']>[0], inner: ExecutionStore['acquireLease']) => ReturnType<ExecutionStore['acquireLease']>,
): ExecutionStore {
  return {
    acquireLease: (request) => lease(request, (r) => store.acquireLease(r)),
    complete: (w) => store.complete(w),
    release: (w) => store.release(w),
    fail: (w) => store.fail(w),
    failExhausted: (r) => store.failExhausted(r),
    get: (route, key) => store.get(route, key),
    markDeadLettered: (route, key, id) => store.markDeadLettered(route, key, id),
    rememberTaken: (route, fingerprint, receivedAt) => store.rememberTaken(route, fingerprint, receivedAt),
    redrive: (r) => store.redrive(r),
    appendLog: (e) => store.appendLog(e),
    park: (r) => store.park(r),
    deferForRate: (r) => store.deferForRate(r),
    deferLeased: (w) => store.deferLeased(w),
    parkInLine: (r) => store.parkInLine(r),
    unpark: (ref, nowMs) => store.unpark(ref, nowMs),
  };
}

/** A gate whose items are this harness's alone: the route's name with a suffix of its own. */
function ownGate(gate: RateGate): RateGate {
  const suffix = randomUUID().slice(0, 8);
  return { admit: (route, limit, nowMs, window) => gate.admit(`${route}~${suffix}`, limit, nowMs, window) };
}
