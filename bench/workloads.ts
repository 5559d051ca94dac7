/**
 * The workloads, run through the same in-process harness for every receiver: the sender
 * builds and signs each delivery, then the clock runs from the handler call to its answer.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { payloadOf, seededRandom, signedEvent } from './deliveries.ts';
import type { BenchExecutor, BenchReceiver } from './stack.ts';
import { tally } from './stats.ts';

/** How long a sender waits for our answer before it retries, when it lost one. */
export const SENDER_TIMEOUT_MS = 15_000;
import type { ReceiverName } from './receivers/receiver.ts';

export interface LoadResult {
  readonly receiver: ReceiverName;
  readonly deliveries: number;
  readonly newDeliveries: number;
  readonly duplicateDeliveries: number;
  readonly wallMs: number;
  readonly latenciesMs: readonly number[];
  /** Answers by HTTP status. */
  readonly statuses: Record<string, number>;
  /** Thrown invocations by error name. */
  readonly errors: Record<string, number>;
  /** DynamoDB requests sent, as counted on the wire. */
  readonly requests: number;
  readonly byOperation: Record<string, number>;
  /** Effect executions (see BenchReceiver.effects). */
  readonly executions: number;
  /** Node CPU of the measured part alone, when the workload has an unmeasured part (e). */
  readonly cpuMicros?: number;
  /**
   * Node CPU from each handler call to its answer, summed: the handler and its SDK clients, not
   * the sender's signing. Only when deliveries go one at a time; concurrent calls' spans overlap.
   */
  readonly handlerCpuMicros?: number;
  /** Time spent in DynamoDB requests, from send to parsed answer, summed. */
  readonly requestMs: number;
}

const cpuOf = (usage: NodeJS.CpuUsage): number => usage.user + usage.system;

/**
 * Each answer's latency, from the handler call to its answer, and the answers and errors by kind;
 * with `timesCpu`, the process's CPU over each call too (for deliveries sent one at a time).
 */
class AnswerLog {
  readonly latenciesMs: number[] = [];
  readonly statuses: Record<string, number> = {};
  readonly errors: Record<string, number> = {};
  readonly #timesCpu: boolean;
  #cpuMicros = 0;

  constructor(timesCpu: boolean) {
    this.#timesCpu = timesCpu;
  }

  /** The handlers' CPU over every call, or undefined when not timed. */
  get handlerCpuMicros(): number | undefined {
    return this.#timesCpu ? this.#cpuMicros : undefined;
  }

  async send(receiver: BenchReceiver, event: APIGatewayProxyEventV2): Promise<void> {
    const cpu0 = this.#timesCpu ? process.cpuUsage() : undefined;
    const t0 = performance.now();
    const answer = await receiver.invoke(event);
    this.latenciesMs.push(performance.now() - t0);
    if (cpu0 !== undefined) this.#cpuMicros += cpuOf(process.cpuUsage(cpu0));
    tally(this.statuses, String(answer.status));
    if (answer.error !== undefined) tally(this.errors, answer.error);
  }
}

/** Runs `count` tasks with at most `concurrency` in flight. */
async function pool(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface LoadOptions {
  readonly deliveries: number;
  readonly concurrency: number;
  readonly bodyBytes: number;
  /** Share of deliveries that repeat a key whose first delivery was already answered. @default 0 */
  readonly duplicateShare?: number;
  /** Seed of the duplicate pattern. @default 1 */
  readonly seed?: number;
}

/**
 * Unique deliveries, or a mix where `duplicateShare` of them repeat an earlier key. A
 * duplicate is only sent once its original was answered: a retry after a lost ack, not a
 * concurrent copy (that is the storm's job).
 */
export async function runLoad(receiver: BenchReceiver, options: LoadOptions): Promise<LoadResult> {
  const random = seededRandom(options.seed ?? 1);
  const share = options.duplicateShare ?? 0;
  const answered: { key: string; body: string }[] = [];
  const log = new AnswerLog(options.concurrency === 1);
  let duplicateDeliveries = 0;
  receiver.requests.reset();
  receiver.effects.reset();
  const started = performance.now();
  await pool(options.deliveries, options.concurrency, async () => {
    let key: string;
    let body: string;
    const original = share > 0 && random() < share ? answered[Math.floor(random() * answered.length)] : undefined;
    if (original !== undefined) {
      ({ key, body } = original);
      duplicateDeliveries++;
    } else {
      key = `msg_${randomUUID()}`;
      body = payloadOf(key, options.bodyBytes);
    }
    await log.send(receiver, signedEvent(key, body));
    if (original === undefined) answered.push({ key, body });
  });
  const wallMs = performance.now() - started;
  return {
    receiver: receiver.name,
    deliveries: options.deliveries,
    newDeliveries: options.deliveries - duplicateDeliveries,
    duplicateDeliveries,
    wallMs,
    latenciesMs: log.latenciesMs,
    statuses: log.statuses,
    errors: log.errors,
    ...countersOf(receiver),
    handlerCpuMicros: log.handlerCpuMicros,
  };
}

/** What a receiver's counters hold since their last reset: its DynamoDB requests and its executions. */
function countersOf(receiver: BenchReceiver): Pick<LoadResult, 'requests' | 'requestMs' | 'byOperation' | 'executions'> {
  return {
    requests: receiver.requests.total(),
    requestMs: receiver.requests.elapsedMs(),
    byOperation: Object.fromEntries(receiver.requests.byOperation),
    executions: receiver.effects.total(),
  };
}

export interface RetryOptions {
  /** Keys delivered first (unmeasured), then each delivered again once, sequentially (measured). */
  readonly deliveries: number;
  readonly bodyBytes: number;
  /**
   * Runs between the first deliveries and their retries: retryproof's executor finishes the
   * work, as it has on AWS by the time a sender retries (1 s at the earliest on a ladder).
   */
  readonly settle?: () => Promise<unknown>;
  /** Called before the first deliveries and again before the retries, with the phase's name. */
  readonly phase?: (name: 'first' | 'retry') => void;
}

/**
 * A sender's retry after it lost our answer: every key is delivered once (unmeasured), the
 * work settles, then every key is delivered again, one at a time. Only the retries are
 * measured: the latency, requests and executions of a duplicate alone, on an idle machine.
 */
export async function runRetries(receiver: BenchReceiver, options: RetryOptions): Promise<LoadResult> {
  const firsts = Array.from({ length: options.deliveries }, () => {
    const key = `msg_${randomUUID()}`;
    return { key, body: payloadOf(key, options.bodyBytes) };
  });
  options.phase?.('first');
  await pool(firsts.length, 8, async (i) => {
    const first = firsts[i];
    if (first !== undefined) await receiver.invoke(signedEvent(first.key, first.body));
  });
  await options.settle?.();
  // The sender retries after its own request timeout (15 s here; senders wait seconds for an answer).
  receiver.senderWaits?.(SENDER_TIMEOUT_MS);
  options.phase?.('retry');
  receiver.requests.reset();
  receiver.effects.reset();
  const log = new AnswerLog(true);
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  for (const { key, body } of firsts) await log.send(receiver, signedEvent(key, body));
  return {
    receiver: receiver.name,
    deliveries: firsts.length,
    newDeliveries: 0,
    duplicateDeliveries: firsts.length,
    wallMs: performance.now() - started,
    latenciesMs: log.latenciesMs,
    statuses: log.statuses,
    errors: log.errors,
    ...countersOf(receiver),
    cpuMicros: cpuOf(process.cpuUsage(cpu0)),
    handlerCpuMicros: log.handlerCpuMicros,
  };
}

export interface StormOptions {
  readonly keys: number;
  /** Copies of each delivery sent at once. */
  readonly copies: number;
  /** Keys stormed at the same time. */
  readonly keyConcurrency: number;
  /** Each copy leaves within this many ms of the others (network spread). */
  readonly jitterMs: number;
  /** The sender's retry ladder, scaled: a copy answered non-2xx is sent again after each step in turn. */
  readonly ladderMs: readonly number[];
  /** How long one execution of the effect takes; longer than every ladder step. */
  readonly effectMs: number;
  readonly bodyBytes: number;
  readonly seed?: number;
}

export interface StormResult {
  readonly receiver: ReceiverName;
  readonly keys: number;
  /** Invocations, first sends and retries. */
  readonly invocations: number;
  readonly retries: number;
  readonly wallMs: number;
  readonly statuses: Record<string, number>;
  readonly errors: Record<string, number>;
  readonly requests: number;
  readonly byOperation: Record<string, number>;
  /** What the receiver itself decided to execute: retryproof's queued messages, the peers' body runs. */
  readonly decided: { readonly total: number; readonly keysMoreThanOnce: number; readonly extra: number; readonly maxPerKey: number };
  /** retryproof only: runs of the action by the executor after the storm, and its DynamoDB requests. */
  readonly executed?: {
    readonly total: number;
    readonly keysMoreThanOnce: number;
    readonly extra: number;
    readonly maxPerKey: number;
    readonly messages: number;
    readonly requests: number;
    readonly byOperation: Record<string, number>;
  };
}

/**
 * The storm: `copies` concurrent copies of each of `keys` deliveries, each copy retried up
 * the scaled ladder while it is answered non-2xx, against an effect that outlasts every step.
 */
export async function runStorm(receiver: BenchReceiver, options: StormOptions, executor?: BenchExecutor): Promise<StormResult> {
  const random = seededRandom(options.seed ?? 7);
  const statuses: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let invocations = 0;
  let retries = 0;
  receiver.requests.reset();
  receiver.effects.reset();
  receiver.effects.effectMs = options.effectMs;
  const started = performance.now();
  try {
    await pool(options.keys, options.keyConcurrency, async () => {
      const key = `msg_${randomUUID()}`;
      const body = payloadOf(key, options.bodyBytes);
      const delays = Array.from({ length: options.copies }, () => random() * options.jitterMs);
      await Promise.all(
        delays.map(async (delay) => {
          await sleep(delay);
          for (let attempt = 0; ; attempt++) {
            const answer = await receiver.invoke(signedEvent(key, body));
            invocations++;
            tally(statuses, String(answer.status));
            if (answer.error !== undefined) tally(errors, answer.error);
            const step = options.ladderMs[attempt];
            if (answer.status < 300 || step === undefined) return;
            retries++;
            await sleep(step);
          }
        }),
      );
    });
  } finally {
    receiver.effects.effectMs = 0;
  }
  const wallMs = performance.now() - started;
  const decidedDup = receiver.effects.duplicates();
  const result: StormResult = {
    receiver: receiver.name,
    keys: options.keys,
    invocations,
    retries,
    wallMs,
    statuses,
    errors,
    requests: receiver.requests.total(),
    byOperation: Object.fromEntries(receiver.requests.byOperation),
    decided: { total: receiver.effects.total(), keysMoreThanOnce: decidedDup.keys, extra: decidedDup.extraExecutions, maxPerKey: decidedDup.maxPerKey },
  };
  if (executor === undefined) return result;
  executor.requests.reset();
  executor.effects.reset();
  executor.effects.effectMs = options.effectMs;
  try {
    const { messages } = await executor.drain(5, 120_000);
    const dup = executor.effects.duplicates();
    return {
      ...result,
      executed: {
        total: executor.effects.total(),
        keysMoreThanOnce: dup.keys,
        extra: dup.extraExecutions,
        maxPerKey: dup.maxPerKey,
        messages,
        requests: executor.requests.total(),
        byOperation: Object.fromEntries(executor.requests.byOperation),
      },
    };
  } finally {
    executor.effects.effectMs = 0;
  }
}

/** What a receiver did with a key reused for another body, and with the genuine retry after it. */
export interface KeyReuseResult {
  readonly receiver: ReceiverName;
  readonly statuses: readonly [number, number, number];
  readonly errors: readonly string[];
  /** Effect executions for the key after all three. */
  readonly executions: number;
  readonly byOperation: Record<string, number>;
}

/**
 * Sends a delivery, then another body under the same key (a sender bug or a forgery with a
 * valid signature), then the first delivery again, as the sender's retry would.
 */
export async function runKeyReuse(receiver: BenchReceiver, bodyBytes: number): Promise<KeyReuseResult> {
  const key = `msg_${randomUUID()}`;
  const body = payloadOf(key, bodyBytes);
  const other = payloadOf(key, bodyBytes + 16);
  receiver.requests.reset();
  receiver.effects.reset();
  const answers = [];
  for (const b of [body, other, body]) answers.push(await receiver.invoke(signedEvent(key, b)));
  return {
    receiver: receiver.name,
    statuses: [answers[0]?.status ?? 0, answers[1]?.status ?? 0, answers[2]?.status ?? 0],
    errors: answers.flatMap((a) => (a.error === undefined ? [] : [a.error])),
    executions: receiver.effects.perKey.get(key) ?? 0,
    byOperation: Object.fromEntries(receiver.requests.byOperation),
  };
}
