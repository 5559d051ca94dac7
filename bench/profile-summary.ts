/**
 * Where the CPU of each profiled bench phase goes, by package: `BENCH_CPU_PROF_DIR=dir npm run
 * bench` writes the profiles (bench/cpu-profile.ts), then
 *
 *   npm run bench:profile -- --dir dir [--top 15]
 *
 * prints, per phase (ingest-a-retryproof, retryproof, …, every round of a phase summed), the
 * milliseconds sampled in each package or Node subsystem, idle time and the profiler left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string } }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The package or subsystem a frame belongs to: `@scope/name`, `name`, `lambdas/ingest`, `node:http`, or the V8 pseudo-frame. */
export function bucketOf(url: string, functionName: string): string {
  if (url === '') return functionName === '' ? '(native)' : `(${functionName.replace(/^\(|\)$/g, '')})`;
  const inModules = url.split('/node_modules/').at(-1);
  if (inModules !== undefined && inModules !== url) {
    const parts = inModules.split('/');
    return parts[0]?.startsWith('@') === true ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? url);
  }
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').split('/')[0] ?? url;
  const project = /\/(lambdas|bench|local|lib|cli)\/([^/]+)/.exec(url);
  return project === null ? url : project[1] === 'lambdas' ? `lambdas/${project[2] ?? ''}`.replace(/\.ts$/, '') : project[1] ?? url;
}

/** Sampled microseconds per bucket of one profile. */
export function bucketsOf(profile: CpuProfile): Map<string, number> {
  const bucketById = new Map(profile.nodes.map((n) => [n.id, bucketOf(n.callFrame.url, n.callFrame.functionName)]));
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const bucket = bucketById.get(id) ?? '(unknown)';
    out.set(bucket, (out.get(bucket) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  // Idle, and the profiler's own work.
  out.delete('(idle)');
  out.delete('node:inspector');
  return out;
}

function main(): void {
  const { values } = parseArgs({ options: { dir: { type: 'string' }, top: { type: 'string', default: '15' } } });
  if (values.dir === undefined) throw new Error('usage: npm run bench:profile -- --dir DIR [--top N]');
  const phases = new Map<string, Map<string, number>>();
  for (const file of readdirSync(values.dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    const phase = file.replace(/-\d+\.cpuprofile$/, '');
    const sum = phases.get(phase) ?? new Map<string, number>();
    for (const [b, us] of bucketsOf(JSON.parse(readFileSync(join(values.dir, file), 'utf8')) as CpuProfile)) sum.set(b, (sum.get(b) ?? 0) + us);
    phases.set(phase, sum);
  }
  for (const [phase, sum] of phases) {
    const total = [...sum.values()].reduce((a, b) => a + b, 0);
    process.stdout.write(`\n${phase}: ${(total / 1000).toFixed(1)} ms sampled, idle left out\n`);
    for (const [bucket, us] of [...sum].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
      process.stdout.write(`${(us / 1000).toFixed(1).padStart(10)} ms ${((us / total) * 100).toFixed(1).padStart(5)} %  ${bucket}\n`);
    }
  }
}

if (import.meta.main) main();
