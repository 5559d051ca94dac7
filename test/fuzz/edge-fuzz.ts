/**
 * The edge fuzzer: the local HTTP gateway in front of the real ingest handler, on DynamoDB
 * Local and fauxqs, with a table and a queue of its own so every write can be counted, and
 * the property every answer must hold. `npm run fuzz` and test/local/edge-fuzz.test.ts
 * both drive it; it lives under test/ beside the protocol simulation, which
 * `npm run simulate` drives the same way, because it is test code the script borrows.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import type { Server } from 'node:http';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { createIngestHandler } from '../../lambdas/ingest/create-ingest-handler.ts';
import { prepareRoutes } from '../../lambdas/ingest/prepared-route.ts';
import { createMetrics } from '../../lambdas/observability/powertools.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { StaticSecretSource } from '../../local/static-secret-source.ts';
import { documentClient, DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbRouteStateStore, ROUTE_STATE_SK, routeStatePk } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { createEventsTable, createQueuePair, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { createGateway, listen } from '../../local/http-gateway.ts';
import { LineLogger } from '../../local/line-logger.ts';
import type { LogEntry } from '../../local/line-logger.ts';
import { buildRequest, edgeCase, FUZZ_ROUTES } from './edge-cases.ts';
import type { EdgeCase } from './edge-cases.ts';
import { NoAnswerError, sendRaw } from './raw-http.ts';
import type { RawHttpAnswer } from './raw-http.ts';
import { testConfig } from '../support/test-config.ts';

interface OpenApiResponses {
  paths: Record<string, { post: { responses: Record<string, unknown> } }>;
}

/** Every status docs/openapi.json documents for a delivery. */
export const DOCUMENTED_STATUSES: readonly number[] = Object.keys(
  (JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as OpenApiResponses).paths['/webhooks/{route}']?.post
    .responses ?? {},
).map(Number);

/** Statuses a delivery may get while DynamoDB and SQS are healthy: the documented ones below 500. */
export const HEALTHY_STATUSES: readonly number[] = DOCUMENTED_STATUSES.filter((s) => s < 500);

/**
 * fauxqs refuses characters above U+FFFF in a message body ("Invalid characters found";
 * its check has no `u` flag and no #x10000-#x10FFFF range), which SQS accepts (AWS: "#x9 |
 * #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"). For a body that
 * holds one, the emulator is an unhealthy SQS: the ingest then answers 503 and keeps the
 * record, as it must when a send fails. The body's content type does not matter: a binary
 * copy of a body first received as text is a duplicate, and re-sends the text record.
 * Only a 503 to such a body is excused.
 */
const FAUXQS_REFUSES = /[\u{10000}-\u{10FFFF}]/u;

/** Log levels that must never appear while the dependencies are healthy. */
const ERROR_LEVELS = new Set(['ERROR', 'CRITICAL', 'FATAL']);

/**
 * Duplicates find their record RECEIVED (nothing executes here), and one that finds its
 * message older than this re-sends it. An hour keeps a long run's replays free of re-sends,
 * so "no message for a duplicate" holds exactly; the re-send has its own ingest tests.
 */
const RESEND_AFTER_MS = 3_600_000;

/** The outcome of one case. */
export interface CaseOutcome {
  /** The answer's status; 0 when none arrived. */
  readonly status: number;
  /** Broken promises; empty when the case holds. */
  readonly violations: readonly string[];
  /** A 503 excused because fauxqs refused what SQS carries (see FAUXQS_REFUSES). */
  readonly excused: boolean;
}

/** The running fuzzer. */
export interface EdgeFuzz {
  /** Sends one case and checks the property on what came back and what was written. */
  check(c: EdgeCase): Promise<CaseOutcome>;
  /** Stops the gateway and drops the table and queue clients; the local services stay up. */
  close(): Promise<void>;
}

/** Where the local services are. */
export interface EdgeFuzzOptions {
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
}

/** Closes the gateway, and every connection it still has (a case may have left one half-read). */
function closeServer(server: Server, sockets: ReadonlySet<Socket>): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
    for (const socket of sockets) socket.destroy();
  });
}

async function itemCount(ddb: DynamoDBClient, table: string): Promise<number> {
  const out = await ddb.send(new DescribeTableCommand({ TableName: table }));
  return out.Table?.ItemCount ?? 0;
}

/** Takes every message off the queue, so each case starts from an empty one. */
async function drain(sqs: SQSClient, queueUrl: string): Promise<{ route?: string; key?: string; fingerprint?: string }[]> {
  const taken: { route?: string; key?: string; fingerprint?: string }[] = [];
  for (;;) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 60 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) return taken;
    for (const m of messages) taken.push(JSON.parse(m.Body ?? '{}') as { route?: string; key?: string; fingerprint?: string });
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
  }
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What is wrong with the shape of an answer: status, content type and body. */
export function answerViolations(answer: RawHttpAnswer, method: string): string[] {
  const problems: string[] = [];
  const { status } = answer;
  if (!DOCUMENTED_STATUSES.includes(status)) problems.push(`status ${status} is not documented in docs/openapi.json`);
  else if (!HEALTHY_STATUSES.includes(status)) problems.push(`status ${status} while DynamoDB and SQS are healthy`);
  const type = answer.headers['content-type'];
  // A HEAD answer has headers but no body.
  const body = method === 'HEAD' ? undefined : parseJson(answer.body);
  if (status >= 400) {
    if (type !== 'application/problem+json') problems.push(`a ${status} with content-type ${String(type)}, not application/problem+json`);
    if (method !== 'HEAD') {
      const p = isRecord(body) ? body : {};
      if (typeof p.type !== 'string' || typeof p.title !== 'string' || typeof p.detail !== 'string' || p.status !== status) {
        problems.push(`a ${status} whose body is not a problem with this status: ${answer.body.toString('utf8').slice(0, 200)}`);
      }
    }
  } else if (status >= 200 && status < 300) {
    if (type !== 'application/json') problems.push(`a ${status} with content-type ${String(type)}, not application/json`);
    const a = isRecord(body) ? body : {};
    if (typeof a.id !== 'string' || a.status !== 'accepted') {
      problems.push(`a ${status} whose body is not {id, status: "accepted"}: ${answer.body.toString('utf8').slice(0, 200)}`);
    }
  }
  return problems;
}

/**
 * Starts the gateway and handler on a fresh table and queue pair. Logs are captured, not
 * printed: an error-level entry is a violation. Unhandled rejections anywhere in the
 * process during a case are violations too.
 */
export async function startEdgeFuzz(options: EdgeFuzzOptions): Promise<EdgeFuzz> {
  const suffix = randomUUID().slice(0, 8);
  const ddb = localDynamoClient(options.dynamoEndpoint);
  const sqs = localSqsClient(options.sqsEndpoint);
  const table = await createEventsTable(ddb, `edge-fuzz-${suffix}`);
  const { queueUrl } = await createQueuePair(sqs, options.sqsEndpoint, `edge-fuzz-${suffix}`, { maxReceiveCount: 12 });
  const config = resolveConfig(testConfig(FUZZ_ROUTES));
  const secrets = new StaticSecretSource(
    Object.fromEntries(FUZZ_ROUTES.map((r) => [r.secretName, JSON.stringify({ current: r.secret, previous: r.previousSecret })])),
  );

  const logs: LogEntry[] = [];
  const gatewayErrors: unknown[] = [];
  const rejections: unknown[] = [];
  // Routes whose state item exists: the breaker writes one the first time it pauses a route.
  const stateItems = new Set<string>();
  const onRejection = (reason: unknown): void => {
    rejections.push(reason);
  };
  process.on('unhandledRejection', onRejection);

  const handler = createIngestHandler({
    routes: prepareRoutes(config.routes),
    store: new DynamoDbEventStore(ddb, table),
    queue: new SqsWorkQueue(sqs, queueUrl),
    secrets,
    now: Date.now,
    resendAfterMs: RESEND_AFTER_MS,
    breaker: { routeState: new DynamoDbRouteStateStore(ddb, table) },
    // Every level is captured, so the handler's log calls run with real attributes.
    logger: new LineLogger('retryproof-ingest-fuzz', (entry) => logs.push(entry), 'INFO'),
    metrics: createMetrics('retryproof-ingest-fuzz'),
  });
  const server = createGateway({
    invoke: (event) => handler(event, lambdaContext('retryproof-ingest')),
    admin: new Map(),
    isReady: () => true,
    onError: (error) => gatewayErrors.push(error),
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await listen(server, 0);
  const port = (server.address() as AddressInfo).port;
  let items = await itemCount(ddb, table);

  const check = async (c: EdgeCase): Promise<CaseOutcome> => {
    logs.length = 0;
    gatewayErrors.length = 0;
    const rejectionsBefore = rejections.length;
    const built = buildRequest(c, { port, nowSeconds: Math.floor(Date.now() / 1000) });
    const violations: string[] = [];
    let answer: RawHttpAnswer | undefined;
    try {
      answer = await sendRaw(port, built.raw);
    } catch (err) {
      if (!(err instanceof NoAnswerError)) throw err;
      violations.push(`no answer: ${err.message} (${String((err.cause as Error | undefined)?.message)})`);
    }
    const status = answer?.status ?? 0;
    const excused = status === 503 && FAUXQS_REFUSES.test(built.raw.body.toString('utf8'));
    if (answer !== undefined) violations.push(...answerViolations(answer, c.method).filter((v) => !excused || !v.includes('while DynamoDB and SQS are healthy')));

    const replayed = answer?.headers['idempotent-replayed'] === 'true';
    const accepted = status === 202 && !replayed;
    if (!built.authentic && [202, 409, 422].includes(status)) {
      violations.push(`a delivery without a valid signature got ${status}: only a verified delivery reaches its key`);
    }

    // The record a 202 names, read before the counts: a 202 that is not a replay but finds its
    // record hit before is the retry of a delivery we answered 5xx (an excused 503 earlier in the
    // run, under the same key): the sender's first acceptance, re-sending the work, with no new record.
    let named: { id: string; key: string; record: { fingerprint?: string; status?: string; hits?: number } | undefined } | undefined;
    if (status === 202 && answer !== undefined) {
      const id = (parseJson(answer.body) as { id?: unknown } | undefined)?.id;
      const prefix = `${built.route.name}/`;
      if (typeof id !== 'string' || !id.startsWith(prefix)) {
        violations.push(`the 202 names ${String(id)}, not a delivery of route ${built.route.name}`);
      } else {
        const key = id.slice(prefix.length);
        const record = (
          await documentClient(ddb).send(new GetCommand({ TableName: table, Key: { pk: recordPk(built.route.name, key), sk: RECORD_SK }, ConsistentRead: true }))
        ).Item as { fingerprint?: string; status?: string; hits?: number } | undefined;
        named = { id, key, record };
      }
    }
    const afterOurFailure = accepted && (named?.record?.hits ?? 1) > 1;

    // What was written: one record and one message for a new acceptance; nothing else,
    // except the route state item of a breaker that paused its route on this case.
    let pauses = 0;
    if (!stateItems.has(built.route.name)) {
      const state = await documentClient(ddb).send(
        new GetCommand({ TableName: table, Key: { pk: routeStatePk(built.route.name), sk: ROUTE_STATE_SK }, ConsistentRead: true }),
      );
      if (state.Item !== undefined) {
        stateItems.add(built.route.name);
        pauses = 1;
      }
    }
    const after = await itemCount(ddb, table);
    const messages = await drain(sqs, queueUrl);
    // The replay memory of a route whose scheme signs no timestamp is the executor's to write
    // (after its lease, protocol v3): the ingest only reads it, and no executor runs here.
    const expectedItems = (accepted && !afterOurFailure ? 1 : 0) + pauses;
    // An excused 503 keeps the record it claimed before the send failed (or its duplicate finds it).
    const excusedItems = after - items - expectedItems;
    if (after - items !== expectedItems && !(excused && excusedItems === 1)) {
      violations.push(`${after - items} new items in the events table for a ${status}${replayed ? ' (replayed)' : ''}; expected ${expectedItems}`);
    }
    items = after;
    if (messages.length !== (accepted ? 1 : 0)) {
      violations.push(`${messages.length} messages queued for a ${status}${replayed ? ' (replayed)' : ''}; expected ${accepted ? 1 : 0}`);
    }
    if (named !== undefined) {
      const { id, key, record } = named;
      if (record === undefined) violations.push(`no record for the accepted ${id}`);
      else if (!built.fingerprints.includes(record.fingerprint ?? '')) violations.push(`the record of ${id} holds another body than the one sent`);
      if (accepted && messages.length === 1 && (messages[0]?.key !== key || messages[0].route !== built.route.name)) {
        violations.push(`the message queued for ${id} is for ${String(messages[0]?.route)}/${String(messages[0]?.key)}`);
      }
    }

    for (const entry of logs) {
      if (ERROR_LEVELS.has(String(entry.level)) && !excused) violations.push(`an ${String(entry.level)} log entry: ${String(entry.message)} ${JSON.stringify(entry.error ?? '')}`);
    }
    for (const error of gatewayErrors) violations.push(`the gateway failed: ${(error as Error).message}`);
    // A rejection surfaces a tick or more after it happened; the writes checked above give it that time.
    for (const reason of rejections.slice(rejectionsBefore)) violations.push(`unhandled rejection: ${String(reason)}`);
    return { status, violations, excused };
  };

  return {
    check,
    close: async () => {
      process.off('unhandledRejection', onRejection);
      await closeServer(server, sockets);
      ddb.destroy();
      sqs.destroy();
    },
  };
}

/** Thrown by the property for a case that breaks it; the message lists what broke. */
export class EdgeViolation extends Error {
  readonly status: number;
  constructor(outcome: CaseOutcome) {
    super(`answered ${outcome.status}: ${outcome.violations.join('; ')}`);
    this.name = 'EdgeViolation';
    this.status = outcome.status;
  }
}

/** Counts answers by status while the search runs; `shrinking` is set at the first violation. */
export interface FuzzTally {
  readonly statuses: Map<number, number>;
  runs: number;
  /** 503s excused as fauxqs's refusal of characters above U+FFFF. */
  excused: number;
  shrinking: boolean;
  shrinkSteps: number;
}

/** An empty tally. */
export function newTally(): FuzzTally {
  return { statuses: new Map(), runs: 0, excused: 0, shrinking: false, shrinkSteps: 0 };
}

/** The property: every fuzzed case holds. Counts go to `tally` (search only, not shrinking). */
export function edgeProperty(fuzz: EdgeFuzz, tally: FuzzTally = newTally()): fc.IAsyncProperty<[EdgeCase]> {
  return fc.asyncProperty(edgeCase(), async (c) => {
    const outcome = await fuzz.check(c);
    if (tally.shrinking) tally.shrinkSteps += 1;
    else {
      tally.runs += 1;
      tally.statuses.set(outcome.status, (tally.statuses.get(outcome.status) ?? 0) + 1);
      if (outcome.excused) tally.excused += 1;
    }
    if (outcome.violations.length > 0) {
      tally.shrinking = true;
      throw new EdgeViolation(outcome);
    }
  });
}

/** `202 x 120, 401 x 80, ...` in status order. */
export function formatStatuses(statuses: ReadonlyMap<number, number>): string {
  return [...statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status === 0 ? 'no answer' : status} x ${count}`)
    .join(', ');
}
