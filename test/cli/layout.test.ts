/**
 * The CLI stands above the local stack: cli/ imports local/ only through its entry points
 * (local/index.ts, and the stack itself, local/run-local-stack.ts, which `retryproof start`
 * loads on demand), and local/ imports nothing of cli/. The CLI's `send` and `storm` use the local
 * stack through local/index.ts too; `npm start` lives in scripts/. So the local stack can change
 * its insides without the CLI noticing, and
 * no arrow runs back up from local/ to cli/. And nothing in cli/ reads the repository's
 * retryproof.config.ts: the CLI takes its settings from the running receiver. The check reads
 * every import and re-export of every .ts file of both.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../local/stack-process.ts';

/** Every module specifier a file imports or re-exports, static or dynamic. */
export function specifiersOf(source: string): string[] {
  const found: string[] = [];
  const patterns = [/^\s*(?:import|export)\s[^'"]*?\sfrom\s*['"]([^'"]+)['"]/gms, /^\s*import\s*['"]([^'"]+)['"]/gm, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) if (match[1] !== undefined) found.push(match[1]);
  return found;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * What each side may import of the other: cli/ the local stack's two entry points (the second,
 * the stack itself, loaded on demand so that no other command loads DynamoDB Local, fauxqs or
 * the handlers); local/ nothing.
 */
const ENTRY: Record<'cli' | 'local', readonly string[]> = { cli: [], local: ['local/index.ts', 'local/run-local-stack.ts'] };

/** The imports of `file` (repository-relative) that break the layout, each as `file -> target`. */
export function crossImports(file: string, source: string): string[] {
  const side = file.split('/')[0];
  if (side !== 'cli' && side !== 'local') return [];
  const other = side === 'cli' ? 'local' : 'cli';
  const bad: string[] = [];
  for (const specifier of specifiersOf(source)) {
    if (!specifier.startsWith('.')) continue;
    const target = relative(REPO, resolve(REPO, dirname(file), specifier));
    const crosses = target.startsWith(`${other}/`) && !ENTRY[other].includes(target);
    const readsConfigFile = side === 'cli' && target === 'retryproof.config.ts';
    if (crosses || readsConfigFile) bad.push(`${file} -> ${target}`);
  }
  return bad;
}

describe('the layout of cli/ and local/', () => {
  it('cli/ imports local/ only through its entry points, local/ imports nothing of cli/, and cli/ never reads retryproof.config.ts', () => {
    // Prepare
    const files = [...tsFiles(join(REPO, 'cli')), ...tsFiles(join(REPO, 'local'))].map((f) => relative(REPO, f));
    // Act
    const bad = files.flatMap((file) => crossImports(file, readFileSync(join(REPO, file), 'utf8')));
    // Assess
    expect(files.length).toBeGreaterThan(40);
    expect(bad).toEqual([]);
  });

  it('the check sees a cross import in every form it can take, and lets the entry points through', () => {
    expect(crossImports('local/storm/run-storm.ts', "import type { Target } from '../../cli/target.ts';")).toEqual(['local/storm/run-storm.ts -> cli/target.ts']);
    expect(crossImports('local/start.ts', "import { parseFlags } from '../cli/index.ts';")).toEqual(['local/start.ts -> cli/index.ts']);
    expect(crossImports('cli/commands/wait.ts', "import {\n  localDir,\n  localRegionIn,\n} from '../../local/endpoints-file.ts';")).toEqual([
      'cli/commands/wait.ts -> local/endpoints-file.ts',
    ]);
    expect(crossImports('cli/x.ts', "export { a } from '../local/stack.ts';")).toEqual(['cli/x.ts -> local/stack.ts']);
    expect(crossImports('cli/x.ts', "const m = await import('../local/stack.ts');")).toEqual(['cli/x.ts -> local/stack.ts']);
    expect(crossImports('cli/operations/x.ts', "import { config } from '../../retryproof.config.ts';")).toEqual(['cli/operations/x.ts -> retryproof.config.ts']);
    expect(crossImports('scripts/start.ts', "import { parseFlags } from '../cli/index.ts';")).toEqual([]);
    expect(crossImports('cli/target.ts', "import { localDir } from '../local/index.ts';")).toEqual([]);
    expect(crossImports('cli/commands/start.ts', "const m = await import('../../local/run-local-stack.ts');")).toEqual([]);
  });
});
