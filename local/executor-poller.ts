/**
 * The local stand-in for Lambda's SQS event source: a few concurrent workers, each
 * receiving a batch, invoking the executor handler and deleting what succeeded
 * (pollOnce), with a short sleep when the queue is empty.
 */
import type { Context } from 'aws-lambda';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { pollOnce } from './sqs-event-source.ts';
import type { SqsHandler } from './sqs-event-source.ts';

export interface PollerOptions {
  readonly handler: SqsHandler;
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly batchSize: number;
  /** Batches in flight at most, as the event source's maximum concurrency. */
  readonly concurrency: number;
  readonly context: () => Context;
  /** Sleep when a receive finds nothing. @default 100 */
  readonly idleMs?: number;
  /** A receive or delete failed (the handler's own failures never reach here). */
  readonly onError?: (error: unknown) => void;
  /**
   * While the queue is empty, one worker polls and the others wait for it to find work, then all
   * poll again. A route's own event source runs up to its `concurrency` (25, 100) workers: polling
   * an empty queue with each of them would take a core of this machine doing nothing.
   * @default false: every worker polls (the shared queue's few workers, as they always have)
   */
  readonly parkIdleWorkers?: boolean;
}

export interface PollerStats {
  batches: number;
  received: number;
  deleted: number;
  handedBack: number;
}

/** The work a stop would wait for. */
export interface RunningWork {
  /** Messages in batches that the executor handler is running now. */
  readonly messages: number;
  /** The longest any of those batches may still run: its invocation's remaining time. */
  readonly atMostMs: number;
}

export interface Poller {
  readonly stats: Readonly<PollerStats>;
  /** Batches running now. */
  inFlight(): number;
  /** Messages the handler is running now, and how long they may still take. */
  running(): RunningWork;
  /**
   * `drain`: stop receiving and let the batches in flight finish and delete as usual.
   * `abandon`: stop at once, as a killed function: batches in flight still run to their
   * end, but delete nothing, so their messages come back after the visibility timeout.
   * Either way the promise settles when every batch has ended.
   */
  stop(mode: 'drain' | 'abandon'): Promise<void>;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function startPoller(options: PollerOptions): Poller {
  const stopping = new AbortController();
  const killed = new AbortController();
  const stats: PollerStats = { batches: 0, received: 0, deleted: 0, handedBack: 0 };
  let running = 0;
  // Batches handed to the handler, each with its invocation's context (its deadline).
  const handling = new Set<{ readonly messages: number; readonly context: Context }>();
  // A function, not the field itself: the loop's own check would narrow the field to false.
  const isStopping = (): boolean => stopping.signal.aborted;
  // parkIdleWorkers: the worker that polls the empty queue, and the others' wake-ups.
  let idlePoller: number | undefined;
  const parked = new Set<() => void>();
  const wakeAll = (): void => {
    for (const wake of parked) wake();
    parked.clear();
  };
  stopping.signal.addEventListener('abort', wakeAll, { once: true });
  const park = (): Promise<void> =>
    new Promise((resolve) => {
      if (isStopping()) resolve();
      else parked.add(resolve);
    });
  /** After a round that found nothing: sleep and poll again, or (parking) wait for the one that polls. */
  const idle = async (id: number): Promise<void> => {
    if (options.parkIdleWorkers !== true) {
      await sleep(options.idleMs ?? 100, stopping.signal);
      return;
    }
    idlePoller ??= id;
    if (idlePoller === id) await sleep(options.idleMs ?? 100, stopping.signal);
    else await park();
  };
  /** After a round that found work: the others may find more. */
  const busy = (id: number): void => {
    if (options.parkIdleWorkers !== true) return;
    if (idlePoller === id) idlePoller = undefined;
    wakeAll();
  };
  let nextId = 0;
  const worker = async (): Promise<void> => {
    const id = nextId++;
    while (!stopping.signal.aborted) {
      let received = 0;
      running++;
      try {
        const round = await pollOnce(options.handler, {
          sqs: options.sqs,
          queueUrl: options.queueUrl,
          queueArn: options.queueArn,
          batchSize: options.batchSize,
          context: options.context,
          signal: killed.signal,
          onInvoke: (messages, context) => {
            busy(id);
            const batch = { messages, context };
            handling.add(batch);
            return () => handling.delete(batch);
          },
        });
        received = round.received;
        if (received > 0) stats.batches++;
        stats.received += round.received;
        stats.deleted += round.deleted;
        stats.handedBack += round.handedBack;
      } catch (err) {
        if (!isStopping()) options.onError?.(err);
        await sleep(1000, stopping.signal);
      } finally {
        running--;
      }
      if (received === 0) await idle(id);
    }
  };
  const workers = Array.from({ length: Math.max(1, options.concurrency) }, () => worker());
  return {
    stats,
    inFlight: () => running,
    running: () => {
      let messages = 0;
      let atMostMs = 0;
      for (const batch of handling) {
        messages += batch.messages;
        atMostMs = Math.max(atMostMs, batch.context.getRemainingTimeInMillis());
      }
      return { messages, atMostMs };
    },
    async stop(mode) {
      if (mode === 'abandon') killed.abort();
      stopping.abort();
      await Promise.all(workers);
    },
  };
}

/** The executor's event source as the local stack holds it: one poller at a time, which can die mid-run and be replaced. */
export interface RestartablePoller {
  /**
   * Kills the running poller as a killed function dies (its batches in flight end, but
   * delete nothing) and starts a new one at once.
   * @returns the batches that were in flight
   */
  restart(): number;
  /** The running poller's work. */
  running(): RunningWork;
  /** The running poller's counters, and its batches in flight. */
  status(): Readonly<PollerStats> & { readonly batchesInFlight: number };
  /** Stops the running poller (see {@link Poller.stop}); resolves when the killed ones' batches have ended too. */
  stop(mode: 'drain' | 'abandon'): Promise<void>;
}

/** @param start starts a poller: the first now, another on each restart */
export function restartablePoller(start: () => Poller): RestartablePoller {
  let current = start();
  const killed: Promise<void>[] = [];
  return {
    restart: () => {
      const old = current;
      const abandonedBatches = old.inFlight();
      current = start();
      killed.push(old.stop('abandon'));
      return abandonedBatches;
    },
    running: () => current.running(),
    status: () => ({ ...current.stats, batchesInFlight: current.inFlight() }),
    stop: async (mode) => {
      await Promise.all([current.stop(mode), ...killed]);
    },
  };
}

/**
 * Several event sources as one (a Region's shared queue and each of its routes' own queues):
 * a restart kills and replaces every one, the work and the counters are their sums.
 */
export function pollerGroup(pollers: readonly RestartablePoller[]): RestartablePoller {
  return {
    restart: () => pollers.reduce((sum, p) => sum + p.restart(), 0),
    running: () => {
      const each = pollers.map((p) => p.running());
      return { messages: each.reduce((sum, w) => sum + w.messages, 0), atMostMs: Math.max(0, ...each.map((w) => w.atMostMs)) };
    },
    status: () => {
      const total = { batches: 0, received: 0, deleted: 0, handedBack: 0, batchesInFlight: 0 };
      for (const p of pollers) {
        const s = p.status();
        total.batches += s.batches;
        total.received += s.received;
        total.deleted += s.deleted;
        total.handedBack += s.handedBack;
        total.batchesInFlight += s.batchesInFlight;
      }
      return total;
    },
    stop: async (mode) => {
      await Promise.all(pollers.map((p) => p.stop(mode)));
    },
  };
}
