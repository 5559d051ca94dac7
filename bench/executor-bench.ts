/**
 * The executor against the Powertools SQS consumer (issue 26, item 3). Each executor runs in
 * a child process of its own (bench/executor-process.ts) on a queue and table of its own;
 * this process is the sender and each pipeline's front, the same kind of front for both:
 * - retryproof: its real ingest (the bench stack's receiver) claims the key and queues the message;
 * - Powertools: the ingest peer of the ingest benchmark (makeHandlerIdempotent), queueing onto
 *   the consumer's queue, as a team with Powertools on both sides would deploy it.
 * Accept-to-effect runs from the moment the work's SendMessage returned, for both; the sender's
 * answer comes after it (retryproof marks the answer first, Powertools completes its record).
 * Duplicate messages (the same work message queued again past the front) reach both executors.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, PurgeQueueCommand } from '@aws-sdk/client-sqs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { WorkMessage } from '../lambdas/domain/event-record.ts';
import type { WorkQueue } from '../lambdas/ports/work-queue.ts';
import { SqsWorkQueue } from '../lambdas/queue/sqs-work-queue.ts';
import { lambdaContext } from '../local/http-api-event.ts';
import { countRequests } from '../local/request-counter.ts';
import type { RequestCounter } from '../local/request-counter.ts';
import { StaticSecretSource } from '../local/static-secret-source.ts';
import { createQueuePair, localDynamoClient, localSqsClient } from '../local/aws-clients.ts';
import { BENCH_SECRET, payloadOf, seededRandom, signedEvent } from './deliveries.ts';
import { acceptToEffect, EXECUTOR_SCENARIOS, mergeExecutorRounds } from './executor-figures.ts';
import type { ExecutorMeasurements, ExecutorName, ExecutorRound, ExecutorScenarioName } from './executor-figures.ts';
import type { ExecutorProcessSettings, ExecutorProcessStats } from './executor-process.ts';
import { createPowertoolsReceiver } from './receivers/powertools.ts';
import { BENCH_ROUTE } from './receivers/receiver.ts';
import type { BenchReceiver } from './stack.ts';
import { createPowertoolsTable } from './tables.ts';

export interface ExecutorBenchSettings {
  readonly rounds: number;
  readonly backlog: number;
  readonly rest: number;
  readonly storm: { readonly deliveries: number; readonly perSecond: number; readonly duplicateShare: number; readonly retryAfterMs: number };
  readonly pollers: number;
  readonly idleMs: number;
  readonly bodyBytes: number;
}

const now = (): number => performance.timeOrigin + performance.now();

/** A forked executor process and the effects it reported. */
export class ExecutorProcess {
  readonly name: ExecutorName;
  readonly #child: ChildProcess;
  readonly effects: { key: string; at: number; inBatchMs?: number }[] = [];
  #waiters: (() => void)[] = [];
  #stopped: ((stats: ExecutorProcessStats) => void) | undefined;
  #failed: ((err: Error) => void) | undefined;

  private constructor(name: ExecutorName, child: ChildProcess) {
    this.name = name;
    this.#child = child;
    child.on('message', (m: { type: string; key?: string; at?: number; inBatchMs?: number; stats?: ExecutorProcessStats; error?: string }) => {
      if (m.type === 'effect' && m.key !== undefined && m.at !== undefined) {
        this.effects.push({ key: m.key, at: m.at, ...(m.inBatchMs === undefined ? {} : { inBatchMs: m.inBatchMs }) });
        for (const w of this.#waiters) w();
      } else if (m.type === 'stopped' && m.stats !== undefined) {
        this.#stopped?.(m.stats);
      } else if (m.type === 'failed') {
        this.#failed?.(new Error(`${name} executor: ${m.error ?? 'failed'}`));
      }
    });
  }

  /** Forks the executor and resolves once it is wired and listening. */
  static async start(settings: ExecutorProcessSettings): Promise<ExecutorProcess> {
    const child = fork(new URL('./executor-process.ts', import.meta.url).pathname, [JSON.stringify(settings)], {
      execPath: process.execPath,
      // Its output joins the parent's stderr: `npm run bench -- --json` keeps stdout for the JSON alone.
      stdio: ['ignore', 2, 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`the ${settings.executor} executor did not start within 30 s`));
      }, 30_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the ${settings.executor} executor exited with code ${String(code)} before it started`));
      });
      child.once('message', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return new ExecutorProcess(settings.executor, child);
  }

  run(pollers: number): void {
    this.effects.length = 0;
    this.#child.send({ type: 'start', pollers });
  }

  stop(): Promise<ExecutorProcessStats> {
    return new Promise((resolve, reject) => {
      this.#stopped = resolve;
      this.#failed = reject;
      this.#child.send({ type: 'stop' });
    });
  }

  /** Resolves when `done()` holds, checked at each reported effect; rejects after `budgetMs`. */
  until(done: () => boolean, budgetMs: number, what: string): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done()) return;
        clearTimeout(timer);
        this.#waiters = this.#waiters.filter((w) => w !== check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== check);
        reject(new Error(`${this.name} executor: ${what} not seen within ${budgetMs} ms`));
      }, budgetMs);
      this.#waiters.push(check);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#child.exitCode !== null) {
        resolve();
        return;
      }
      this.#child.once('exit', () => {
        resolve();
      });
      this.#child.disconnect();
    });
  }
}

/**
 * How one pipeline accepts a delivery. `accept` resolves with the moment its work message was
 * on the queue (SendMessage returned), the same instant for both fronts, and when the sender
 * had its answer; a duplicate delivery is answered from the front's record and queues nothing.
 */
type Front = {
  readonly requests: () => number;
  reset(): void;
  accept(key: string, body: string, duplicate: boolean): Promise<{ queuedAt: number; answeredAt: number }>;
  /** Queues a key's accepted work message once more, past the front: a duplicate message. */
  resend(key: string): Promise<void>;
};

/** Stamps each key's send and keeps its message, so it can be queued again as a duplicate message. */
class StampingQueue implements WorkQueue {
  readonly #inner: WorkQueue;
  readonly queuedAt = new Map<string, number>();
  readonly #sent = new Map<string, WorkMessage>();
  constructor(inner: WorkQueue) {
    this.#inner = inner;
  }
  async send(message: WorkMessage): Promise<void> {
    await this.#inner.send(message);
    this.queuedAt.set(message.key, now());
    this.#sent.set(message.key, message);
  }
  async resend(key: string): Promise<boolean> {
    const message = this.#sent.get(key);
    if (message === undefined) return false;
    await this.#inner.send(message);
    return true;
  }
}

function frontOf(
  name: ExecutorName,
  invoke: (event: APIGatewayProxyEventV2) => Promise<number>,
  requests: RequestCounter,
  queuedAt: (key: string) => number | undefined,
  resend: (key: string) => Promise<boolean>,
): Front {
  return {
    requests: () => requests.total(),
    reset: () => {
      requests.reset();
    },
    async accept(key, body, duplicate) {
      const status = await invoke(signedEvent(key, body));
      const answeredAt = now();
      if (!duplicate && status !== 202) throw new Error(`${name}'s ingest answered ${status} to the new key ${key}`);
      return { queuedAt: queuedAt(key) ?? answeredAt, answeredAt };
    },
    async resend(key) {
      if (!(await resend(key))) throw new Error(`${name}'s ingest sent no message for ${key}`);
    },
  };
}

function retryproofFront(receiver: BenchReceiver): Front {
  const resend = receiver.keepMessages?.();
  return frontOf(
    'retryproof',
    async (event) => (await receiver.invoke(event)).status,
    receiver.requests,
    (key) => receiver.queuedAt?.get(key),
    (key) => resend?.(key) ?? Promise.resolve(false),
  );
}

/**
 * The consumer's front: the Powertools ingest peer of the ingest benchmark (makeHandlerIdempotent
 * on a table of its own, verification first), queueing onto the consumer's queue. Both pipelines
 * then put the same kind of load on this machine's DynamoDB Local and cores before the executor.
 */
function powertoolsFront(client: DynamoDBClient, tableName: string, queue: StampingQueue): Front {
  const requests = countRequests(client);
  const handler = createPowertoolsReceiver({
    persistenceStore: new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client }),
    queue,
    secrets: new StaticSecretSource({ [BENCH_ROUTE.secretName]: BENCH_SECRET }),
  });
  return frontOf(
    'powertools',
    async (event) => {
      try {
        return (await handler(event, lambdaContext('bench-ingest'))).statusCode ?? 200;
      } catch {
        // A thrown invocation reaches the sender as a 500, as API Gateway answers it.
        return 500;
      }
    },
    requests,
    (key) => queue.queuedAt.get(key),
    (key) => queue.resend(key),
  );
}

const BUDGET_MS = 120_000;

async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(count, concurrency) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

function roundOf(
  stats: ExecutorProcessStats,
  accepted: ReadonlyMap<string, number>,
  effects: readonly { key: string; at: number; inBatchMs?: number }[],
  extra: { deliveries: number; wallMs: number; frontRequests: number; timed: boolean },
): ExecutorRound {
  const e = acceptToEffect(accepted, effects);
  return {
    deliveries: extra.deliveries,
    executed: e.executed,
    keysMoreThanOnce: e.keysMoreThanOnce,
    received: stats.received,
    wallMs: extra.wallMs,
    cpuMicros: stats.cpuMicros,
    requests: stats.requests,
    requestMs: stats.requestMs,
    byOperation: stats.byOperation,
    writeUnits: stats.writeUnits,
    refusedWrites: stats.refusedWrites,
    frontRequests: extra.frontRequests,
    latenciesMs: extra.timed ? e.latenciesMs : [],
    inBatchMs: extra.timed ? e.inBatchMs : [],
  };
}

const newKey = (): string => `msg_${randomUUID()}`;

/** Fills the queue with `n` unique deliveries, then times the executor draining it. */
async function backlog(ex: ExecutorProcess, front: Front, s: ExecutorBenchSettings): Promise<ExecutorRound> {
  const accepted = new Map<string, number>();
  front.reset();
  await pool(s.backlog, 8, async () => {
    const key = newKey();
    accepted.set(key, (await front.accept(key, payloadOf(key, s.bodyBytes), false)).queuedAt);
  });
  const frontRequests = front.requests();
  const t0 = now();
  ex.run(s.pollers);
  await ex.until(() => new Set(ex.effects.map((e) => e.key)).size >= accepted.size, BUDGET_MS, `${accepted.size} backlog effects`);
  const last = Math.max(...ex.effects.map((e) => e.at));
  const stats = await ex.stop();
  return roundOf(stats, accepted, ex.effects, { deliveries: s.backlog, wallMs: last - t0, frontRequests, timed: false });
}

/** One delivery at a time, each after the previous one's effect: the pipeline at rest. */
async function atRest(ex: ExecutorProcess, front: Front, s: ExecutorBenchSettings): Promise<ExecutorRound> {
  const accepted = new Map<string, number>();
  const answerLagMs: number[] = [];
  front.reset();
  ex.run(s.pollers);
  const t0 = now();
  for (let i = 0; i < s.rest; i++) {
    const key = newKey();
    const at = await front.accept(key, payloadOf(key, s.bodyBytes), false);
    accepted.set(key, at.queuedAt);
    answerLagMs.push(at.answeredAt - at.queuedAt);
    await ex.until(() => ex.effects.some((e) => e.key === key), BUDGET_MS, `the effect of ${key}`);
  }
  const wallMs = now() - t0;
  const stats = await ex.stop();
  return { ...roundOf(stats, accepted, ex.effects, { deliveries: s.rest, wallMs, frontRequests: front.requests(), timed: true }), answerLagMs };
}

/**
 * Deliveries at a steady rate, whatever the answers' speed (the same arrivals for both), of
 * which `duplicateShare` repeat a key accepted at least `retryAfterMs` earlier: a sender's
 * retry after a lost answer. The round ends once every key's effect ran and the queue is empty.
 */
async function storm(
  ex: ExecutorProcess,
  front: Front,
  s: ExecutorBenchSettings,
  seed: number,
  queue: { readonly count: () => Promise<number>; readonly purge: () => Promise<void> },
  duplicatesAs: 'deliveries' | 'messages',
): Promise<ExecutorRound> {
  const random = seededRandom(seed);
  const accepted = new Map<string, number>();
  const bodies: { key: string; body: string; at: number }[] = [];
  front.reset();
  ex.run(s.pollers);
  const t0 = now();
  const cpu0 = process.cpuUsage();
  const sends: Promise<void>[] = [];
  let duplicates = 0;
  for (let i = 0; i < s.storm.deliveries; i++) {
    const due = t0 + (i * 1000) / s.storm.perSecond;
    const wait = due - now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // The duplicates are kept to their share from the first eligible key on, so the early
    // deliveries (before any key is old enough to be retried) do not thin the storm.
    const eligible = bodies.filter((b) => b.at <= now() - s.storm.retryAfterMs);
    const behind = duplicates < s.storm.duplicateShare * (i + 1);
    const original = eligible.length > 0 && behind ? eligible[Math.floor(random() * eligible.length)] : undefined;
    if (original !== undefined) {
      duplicates++;
      sends.push(duplicatesAs === 'deliveries' ? front.accept(original.key, original.body, true).then(() => undefined) : front.resend(original.key));
      continue;
    }
    const key = newKey();
    const body = payloadOf(key, s.bodyBytes);
    sends.push(
      front.accept(key, body, false).then((at) => {
        accepted.set(key, at.queuedAt);
        bodies.push({ key, body, at: at.answeredAt });
      }),
    );
  }
  await Promise.all(sends);
  const frontCpu = process.cpuUsage(cpu0);
  await ex.until(() => new Set(ex.effects.map((e) => e.key)).size >= accepted.size, BUDGET_MS, `${accepted.size} storm effects`);
  const last = Math.max(...ex.effects.map((e) => e.at));
  // The duplicates still queued are part of the consumer's bill: wait for the queue to empty.
  const until = now() + 10_000;
  while ((await queue.count()) > 0 && now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  const stats = await ex.stop();
  // A copy handed back (it met its original in flight) would come back in the next scenario.
  await queue.purge();
  return {
    ...roundOf(stats, accepted, ex.effects, { deliveries: s.storm.deliveries, wallMs: last - t0, frontRequests: front.requests(), timed: true }),
    frontCpuMicros: frontCpu.user + frontCpu.system,
  };
}

/** Round r's order: alternating, so neither executor always goes first. */
const orderOf = (round: number): readonly ExecutorName[] => (round % 2 === 0 ? ['retryproof', 'powertools'] : ['powertools', 'retryproof']);

/**
 * Runs the three scenarios for both executors, `rounds` times in alternating order.
 * @param retryproof the bench stack's retryproof receiver: its ingest is retryproof's front
 */
export async function runExecutorBench(
  endpoints: { readonly dynamo: string; readonly sqs: string },
  retryproof: { readonly receiver: BenchReceiver; readonly tableName: string },
  settings: ExecutorBenchSettings,
  log: (line: string) => void,
): Promise<ExecutorMeasurements> {
  const run = randomUUID().slice(0, 8);
  const admin = localDynamoClient(endpoints.dynamo);
  const sqs = localSqsClient(endpoints.sqs);
  const ptTable = await createPowertoolsTable(admin, `bench-${run}-consumer`);
  const ptQueue = await createQueuePair(sqs, endpoints.sqs, `bench-${run}-consumer`, { maxReceiveCount: 5 });
  const inQueue = async (queueUrl: string): Promise<number> => {
    const out = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
  };
  const base = { dynamo: endpoints.dynamo, sqs: endpoints.sqs, idleMs: settings.idleMs };
  const executors = {
    retryproof: await ExecutorProcess.start({ ...base, executor: 'retryproof', tableName: retryproof.tableName, queueUrl: retryproof.receiver.queueUrl }),
    powertools: await ExecutorProcess.start({ ...base, executor: 'powertools', tableName: ptTable, queueUrl: ptQueue.queueUrl }),
  };
  const ingestTable = await createPowertoolsTable(admin, `bench-${run}-consumer-ingest`);
  const frontClient = localDynamoClient(endpoints.dynamo);
  const fronts = {
    retryproof: retryproofFront(retryproof.receiver),
    powertools: powertoolsFront(frontClient, ingestTable, new StampingQueue(new SqsWorkQueue(sqs, ptQueue.queueUrl))),
  };
  const queues = { retryproof: retryproof.receiver.queueUrl, powertools: ptQueue.queueUrl };
  const rounds = Object.fromEntries(
    (Object.keys(EXECUTOR_SCENARIOS) as ExecutorScenarioName[]).map((name) => [name, { retryproof: [], powertools: [] }]),
  ) as unknown as Record<ExecutorScenarioName, Record<ExecutorName, ExecutorRound[]>>;
  try {
    for (let round = 0; round < settings.rounds; round++) {
      for (const name of orderOf(round)) {
        const ex = executors[name];
        const front = fronts[name];
        const b = await backlog(ex, front, settings);
        const r = await atRest(ex, front, settings);
        const queue = {
          count: () => inQueue(queues[name]),
          purge: async () => {
            await sqs.send(new PurgeQueueCommand({ QueueUrl: queues[name] }));
          },
        };
        const st = await storm(ex, front, settings, 2000 + round, queue, 'deliveries');
        const rs = await storm(ex, front, settings, 3000 + round, queue, 'messages');
        rounds.backlog[name].push(b);
        rounds.rest[name].push(r);
        rounds.storm[name].push(st);
        rounds.resent[name].push(rs);
        const m = (x: ExecutorRound): string => `${(x.requests / x.executed).toFixed(2)} req, ${(x.cpuMicros / 1000 / x.executed).toFixed(2)} ms CPU`;
        log(
          `[executor] round ${round + 1}/${settings.rounds} ${name.padEnd(10)} backlog ${b.executed} in ${(b.wallMs / 1000).toFixed(2)} s (${m(b)}); ` +
            `rest p50 ${mergeExecutorRounds([r]).p50.toFixed(1)} ms; storm ${st.deliveries} deliveries, ${st.executed} executed, ` +
            `p50 ${mergeExecutorRounds([st]).p50.toFixed(1)} ms (${m(st)}); resent: ${rs.received} received, ${rs.executed} executed, ` +
            `p50 ${mergeExecutorRounds([rs]).p50.toFixed(1)} ms (${m(rs)}); keys run twice ${st.keysMoreThanOnce + rs.keysMoreThanOnce}`,
        );
      }
    }
  } finally {
    await Promise.all([executors.retryproof.close(), executors.powertools.close()]);
    admin.destroy();
    frontClient.destroy();
    sqs.destroy();
  }
  const merged = (s: ExecutorScenarioName): Record<ExecutorName, ReturnType<typeof mergeExecutorRounds>> => ({
    retryproof: mergeExecutorRounds(rounds[s].retryproof),
    powertools: mergeExecutorRounds(rounds[s].powertools),
  });
  return { backlog: merged('backlog'), rest: merged('rest'), storm: merged('storm'), resent: merged('resent') };
}
