/**
 * BENCH_CPU_PROF_DIR=dir: CPU profiles of the bench's measured phases (the executor's, in its
 * own process, and the ingest's sequential workloads a and e, per receiver and round), written
 * as `<name>-<n>.cpuprofile` for Chrome's DevTools or `npm run bench:profile`.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export interface PhaseProfiler {
  start(): Promise<void>;
  /** Stops the profile begun by the last start and writes it under `name` (numbered per name). */
  stop(name: string): Promise<void>;
}

const OFF: PhaseProfiler = { start: () => Promise.resolve(), stop: () => Promise.resolve() };

/** A profiler when BENCH_CPU_PROF_DIR is set; otherwise one that does nothing. */
export function phaseProfiler(): PhaseProfiler {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  if (dir === undefined || dir === '') return OFF;
  const session = new Session();
  session.connect();
  const counts = new Map<string, number>();
  return {
    start: async () => {
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    },
    stop: async (name) => {
      const { profile } = await session.post('Profiler.stop');
      const n = (counts.get(name) ?? 0) + 1;
      counts.set(name, n);
      writeFileSync(join(dir, `${name}-${String(n)}.cpuprofile`), JSON.stringify(profile));
    },
  };
}
