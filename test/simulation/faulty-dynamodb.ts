/**
 * DynamoDB as the protocol's SDK clients see it in the simulation: each attempt of each call
 * may commit and then lose its answer, fail before it reaches the table, or be throttled
 * (test/support/ambiguous-dynamodb.ts injects the outcome below the SDK's retry middleware, so
 * the SDK's own retry decision, maxAttempts and retry quota apply). This file adds what the
 * simulation needs around that:
 *
 * - The gap between a failed attempt and the SDK's retry of it is a yield point: another actor
 *   may act between a write that committed and its retry (which then meets the committed write).
 * - The simulated clock moves on by the backoff the SDK would have waited before the retry. The
 *   wait is zero in real time; the amount is drawn as the SDK's StandardRetryStrategy draws it:
 *   `random * min(base * 2^i, 20 s)` for the i-th retry (i from 0), base 25 ms for DynamoDB
 *   (`defaultBaseDelay: 25` in node_modules/@aws-sdk/client-dynamodb/dist-es/DynamoDBClient.js)
 *   or 1,000 ms after a throttling error (`Retry.throttlingDelay()`,
 *   node_modules/@smithy/core/dist-es/submodules/retry/util-retry/retries-2026-config.js;
 *   StandardRetryStrategy.js `refreshRetryTokenForRetry`; DefaultRetryBackoffStrategy.js;
 *   MAXIMUM_RETRY_DELAY 20 s in util-retry/constants.js). Three throttled retries can so cost
 *   up to 7 s of a lease.
 * - Every request on the wire is counted for its actor (Scheduler.ioStarted/ioEnded), so the
 *   scheduler knows when a strand of a batch ended with nothing of the actor in flight.
 * - A slow answer: DynamoDB has acted on the attempt (it committed, or refused its condition),
 *   and the answer arrives seconds later (a latency spike, a stalled connection). The SDK's
 *   default HTTP handler waits for it with no deadline: NodeHttpHandler's `requestTimeout` and
 *   `socketTimeout` are unset unless configured, and an unset one arms no timer
 *   (node_modules/@smithy/node-http-handler/dist-es/set-request-timeout.js, `timeoutInMs = 0`;
 *   resolve-default-socket-timeout.js), and the functions' clients configure none. Only the
 *   caller's abortSignal ends the wait early: the attempt then fails with an AbortError at the
 *   instant the signal fires (node-http-handler.js, `abortSignal.onabort`), which the SDK does not
 *   retry. Meanwhile other actors act, and the simulated clock runs the delay. This is what makes
 *   a write slow by seconds, a lease's included, in the simulation.
 *
 * What the SDK retries, from its own code (service-error-classification/constants.js and
 * service-error-classification.js): THROTTLING errors (ProvisionedThroughputExceededException,
 * ThrottlingException, ... or HTTP 429) and TRANSIENT ones (HTTP 500, 502, 503, 504, timeouts,
 * ECONNRESET ...); up to maxAttempts attempts in all, 4 for DynamoDB
 * (node_modules/@aws-sdk/client-dynamodb/dist-es/runtimeConfig.js, `default: 4`), while the
 * client's retry quota lasts (500 tokens, 14 per transient retry, 5 per throttled one).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { FinalizeHandler, FinalizeHandlerArguments, HandlerExecutionContext, InitializeHandler, InitializeHandlerArguments, MetadataBearer } from '@smithy/types';
import { ambiguousDynamoDb } from '../support/ambiguous-dynamodb.ts';
import type { AttemptOutcome } from '../support/ambiguous-dynamodb.ts';
import type { Scheduler } from './scheduler.ts';
import { firedAt } from './sim-timers.ts';

/** The part of the SDK's HTTP handler the slow answer wraps. */
interface RequestHandlerLike {
  handle: (request: unknown, options?: { abortSignal?: unknown }) => Promise<unknown>;
}

/** Per-attempt chances of each fault, drawn per run. */
export interface DynamoFaultPlan {
  /** A write commits, then its answer is lost (a 500): the SDK re-sends the identical request. */
  readonly ambiguous: number;
  /** ProvisionedThroughputExceededException before the table. */
  readonly throttle: number;
  /** A 503 before the table: nothing written, retried. */
  readonly beforeCommit: number;
  /** DynamoDB acts on the attempt, and its answer arrives SLOW_ANSWER_MIN_MS..SLOW_ANSWER_MAX_MS later. */
  readonly slow: number;
  /**
   * A write meets a concurrent write of the same item from another Region of an MRSC global
   * table: ReplicatedWriteConflictException, nothing written, retried by the SDK. @default 0
   */
  readonly conflict?: number;
}

export interface DynamoFaultStats {
  ambiguousWrites: number;
  /** Writes refused with ReplicatedWriteConflictException (several Regions). */
  replicatedConflicts: number;
  throttles: number;
  errorsBeforeCommit: number;
  /** SDK retries made (each preceded by a yield point). */
  retries: number;
  /** Simulated time spent in SDK backoff, ms. */
  backoffMs: number;
  /** Attempts whose answer came late (or was given up on by the caller's abortSignal). */
  slowAnswers: number;
  /** The longest wait for one answer, ms. */
  slowestAnswerMs: number;
}

export function emptyDynamoFaultStats(): DynamoFaultStats {
  return { ambiguousWrites: 0, replicatedConflicts: 0, throttles: 0, errorsBeforeCommit: 0, retries: 0, backoffMs: 0, slowAnswers: 0, slowestAnswerMs: 0 };
}

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand', 'BatchWriteItemCommand']);
/** DynamoDB's base backoff, and the SDK's after a throttling error (see the header). */
const BASE_DELAY_MS = 25;
const THROTTLING_BASE_DELAY_MS = 1_000;
const MAXIMUM_RETRY_DELAY_MS = 20_000;
/** A slow answer's delay: from a second (a latency spike) to 20 s (a stalled connection). */
export const SLOW_ANSWER_MIN_MS = 1_000;
export const SLOW_ANSWER_MAX_MS = 20_000;

export interface FaultyDynamoOptions {
  readonly sched: Scheduler;
  /** The run's seeded random: every fault and backoff is drawn from it, in call order. */
  readonly random: () => number;
  /** The current plan; faults are off while it returns undefined (settling, or no actor). */
  readonly plan: () => DynamoFaultPlan | undefined;
  /** Moves the simulated clock to at least this instant (true time, epoch ms). */
  readonly advanceTo: (ms: number) => void;
  /** The simulated instant now (true time). */
  readonly now: () => number;
  /** The instant the run's next pending timer (AbortSignal.timeout, sim-timers.ts) fires, if any. */
  readonly nextTimerMs: () => number | undefined;
  /**
   * A delay the schedule chose for this request's answer (an operation aimed at one write of
   * the current actor), given its JSON body; undefined: the plan's chance decides.
   */
  readonly forcedSlowMs?: (body: string) => number | undefined;
  /** Told of each write attempt made to commit and then answer an error, with its command's input. */
  readonly onCommitThenError?: (commandName: string, input: Readonly<Record<string, unknown>>) => void;
  readonly stats: DynamoFaultStats;
  /** Each fault injected, when tracing. */
  readonly trace?: ((line: string) => void) | undefined;
}

/** The calls between a failed attempt and what the SDK does next (Scheduler.retryGapOpened). */
const inRetryGap = new WeakSet<HandlerExecutionContext>();

/** Counts the client's requests per actor; the only middleware a fault-free client needs. */
export function countRequests(client: DynamoDBClient, sched: Scheduler): void {
  client.middlewareStack.add(
    <Output extends MetadataBearer>(next: InitializeHandler<object, Output>, context: HandlerExecutionContext) =>
      async (args: InitializeHandlerArguments<object>) => {
        sched.ioStarted();
        try {
          return await next(args);
        } finally {
          // The SDK gave up after a failed attempt: its retry gap closes here.
          if (inRetryGap.delete(context)) sched.retryGapClosed();
          sched.ioEnded();
        }
      },
    { step: 'initialize', name: 'simulationRequestCount', priority: 'high' },
  );
}

/** Makes `client` meet the plan's faults, attempt by attempt, for calls made inside an actor. */
export function faultyDynamoDb(client: DynamoDBClient, options: FaultyDynamoOptions): void {
  const { sched, random, stats } = options;
  countRequests(client, sched);
  ambiguousDynamoDb(client, (commandName, input, attempt): AttemptOutcome => {
    const outcome = decide(commandName);
    // A transaction or a batch names neither a key nor a table: the trace names what it has (a
    // trace must never throw, or a traced run is another run).
    if (outcome !== 'ok') options.trace?.(`  dynamo ${outcome}: ${commandName} attempt ${attempt} ${JSON.stringify(input.Key ?? input.TableName ?? Object.keys(input)).slice(0, 90)}`);
    if (outcome === 'commit-then-error') options.onCommitThenError?.(commandName, input);
    return outcome;
  });
  function decide(commandName: string): AttemptOutcome {
    const plan = options.plan();
    if (plan === undefined || sched.current() === undefined) return 'ok';
    const roll = random();
    const write = WRITES.has(commandName);
    if (write && roll < plan.ambiguous) {
      stats.ambiguousWrites++;
      return 'commit-then-error';
    }
    const rest = write ? roll - plan.ambiguous : roll;
    if (rest < plan.throttle) {
      stats.throttles++;
      return 'throttle';
    }
    if (rest < plan.throttle + plan.beforeCommit) {
      stats.errorsBeforeCommit++;
      return 'error-before-commit';
    }
    if (write && rest < plan.throttle + plan.beforeCommit + (plan.conflict ?? 0)) {
      stats.replicatedConflicts++;
      return 'replicated-conflict';
    }
    return 'ok';
  }
  // The slow answer, below every middleware: the request handler itself (the SDK reads
  // `config.requestHandler` at each send, smithy-client/command.js, and hands it the caller's
  // abortSignal). DynamoDB Local has answered; the answer reaches the caller `delay` later,
  // or the caller's signal ends the wait first.
  const handler = client.config.requestHandler as unknown as RequestHandlerLike;
  const realHandle = handler.handle.bind(handler);
  handler.handle = async (request, handlerOptions) => {
    // In send order, whatever order the answers arrive in (Scheduler.answerTurn).
    const turn = sched.answerTurn();
    let answer: unknown;
    try {
      answer = await realHandle(request, handlerOptions);
    } finally {
      await turn.wait();
      turn.done();
    }
    // The signed request's body: the JSON text, or its bytes. The bytes are read through their
    // ArrayBuffer: the SDK's JSON body (@smithy/core JsonBytesStringAdapter) warns when a string
    // method is called on it, and Buffer.from(object) calls its valueOf().
    const raw = (request as { body?: unknown }).body;
    const body = typeof raw === 'string' ? raw : raw instanceof Uint8Array ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8') : undefined;
    const forced = sched.current() === undefined || body === undefined ? undefined : options.forcedSlowMs?.(body);
    let delay = forced;
    if (delay === undefined) {
      const plan = options.plan();
      if (plan === undefined || plan.slow <= 0 || sched.current() === undefined || random() >= plan.slow) return answer;
      delay = SLOW_ANSWER_MIN_MS + Math.floor(random() * (SLOW_ANSWER_MAX_MS - SLOW_ANSWER_MIN_MS));
    }
    const sentAt = options.now();
    const due = sentAt + delay;
    stats.slowAnswers++;
    options.trace?.(`  dynamo slow answer: ${delay} ms`);
    const signal = handlerOptions?.abortSignal as AbortSignal | undefined;
    sched.ioEnded();
    // Others act meanwhile. The caller's own timer ends the wait at its instant, so a strand
    // whose signal fired is woken then, before any other actor goes on: it is waiting on the
    // network, not stalled, and the answer follows its abort at once (markAnswered's 1 s bound
    // is what ANSWER_MARGIN_MS counts on; seed 928's ingest, parked here past its abort while
    // other actors' backoffs ran the clock, was killed by its Lambda timeout before answering).
    await sched.yieldPoint('dynamo.slow', () => (signal === undefined ? undefined : firedAt(signal)));
    sched.ioStarted();
    // The clock runs to the answer, timer by timer: a signal that fires first ends the wait then.
    while (signal?.aborted !== true && options.now() < due) {
      const next = options.nextTimerMs();
      options.advanceTo(next === undefined ? due : Math.min(due, Math.max(next, options.now())));
    }
    stats.slowestAnswerMs = Math.max(stats.slowestAnswerMs, options.now() - sentAt);
    if (signal?.aborted === true) throw Object.assign(new Error('Request aborted', { cause: signal.reason }), { name: 'AbortError' });
    return answer;
  };

  // Below the retry middleware (finalizeRequest, priority high) and above the faults
  // (deserialize): it sees every attempt, and the error each one ended with.
  // By the call's invocation id (amz-sdk-invocation-id, one per call, set by the retry
  // middleware): the request object itself is a new one each attempt, once signed.
  const lastError = new Map<string, { throttling: boolean; at: number }>();
  client.middlewareStack.add(
    <Output extends MetadataBearer>(next: FinalizeHandler<object, Output>, context: HandlerExecutionContext) =>
      async (args: FinalizeHandlerArguments<object>) => {
        const headers = (args.request as { headers?: Record<string, string> }).headers ?? {};
        const attempt = Number(/attempt=(\d+)/.exec(headers['amz-sdk-request'] ?? '')?.[1] ?? '1');
        const invocation = headers['amz-sdk-invocation-id'] ?? '';
        const previous = lastError.get(invocation);
        lastError.delete(invocation);
        if (inRetryGap.delete(context)) sched.retryGapClosed();
        if (attempt > 1 && previous !== undefined) {
          stats.retries++;
          const base = previous.throttling ? THROTTLING_BASE_DELAY_MS : BASE_DELAY_MS;
          const delay = Math.floor(random() * Math.min(base * 2 ** (attempt - 2), MAXIMUM_RETRY_DELAY_MS));
          stats.backoffMs += delay;
          // The gap before the retry: others act meanwhile, and the clock runs the backoff.
          sched.ioEnded();
          await sched.yieldPoint(`dynamo.retry ${context.commandName ?? 'unknown'}`);
          sched.ioStarted();
          options.advanceTo(previous.at + delay);
        }
        try {
          return await next(args);
        } catch (error) {
          const name = (error as { name?: string }).name ?? '';
          lastError.set(invocation, { throttling: name === 'ProvisionedThroughputExceededException' || name === 'ThrottlingException', at: options.now() });
          if (!inRetryGap.has(context)) {
            inRetryGap.add(context);
            sched.retryGapOpened();
          }
          throw error;
        }
      },
    { step: 'finalizeRequest', name: 'simulationRetryGap', priority: 'low' },
  );
}
