import type { ExecutorRound } from '../../bench/executor-figures.ts';

/** One executor bench round of 10 deliveries, each run once: the specs change what they look at. */
export function executorRound(over: Partial<ExecutorRound> = {}): ExecutorRound {
  return {
    deliveries: 10,
    executed: 10,
    keysMoreThanOnce: 0,
    received: 10,
    wallMs: 100,
    cpuMicros: 20_000,
    requests: 20,
    requestMs: 30,
    byOperation: { UpdateItemCommand: 20 },
    writeUnits: 30,
    refusedWrites: 0,
    frontRequests: 20,
    latenciesMs: [4, 5, 6],
    ...over,
  };
}
