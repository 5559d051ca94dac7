/**
 * The documentation's command blocks, run as pasted, in order: README.md's walk-through
 * first, then any runnable block of the pages under docs/ (doc-files.ts lists them, in order).
 *
 * The convention, for every fenced block of every documentation file:
 *
 * - The line right before a fence says whether the test runs it:
 *     <!-- runnable -->               run it; it must exit 0
 *     <!-- runnable: exit N -->       run it; it must exit N (an error shown on purpose)
 *     <!-- not runnable: REASON -->   never run (it needs AWS, installs packages, runs the
 *                                     whole suite...); the reason is required
 * - Every shell block must carry one of these marks: a fence whose language is sh, bash,
 *   shell or console, or whose body has a line starting with `$ `. Other blocks (ts,
 *   mermaid, text output) must carry none.
 * - In a ```console block, only the lines starting with `$ ` are commands (a trailing `\`
 *   continues one on the next line); every other line is the output they printed, shown
 *   for the reader and not compared (ids and times differ per run). In a ```sh block,
 *   every line is a command.
 * - Each block runs in its own `bash -e`, in document order, in the repository, with the
 *   environment a user's shell would have plus a free PORT and a fresh
 *   RETRYPROOF_LOCAL_DIR: so the README's commands must not set either. A block fails at
 *   its first failing command, like a pasted block a reader watches; blocks share nothing
 *   but files and what an earlier block started in the background (`npm start &`), so a
 *   block must not rely on a variable an earlier one set. The first failure stops the run:
 *   later blocks build on earlier ones.
 * - Whatever a block leaves running (the local stack) is stopped afterwards, through each
 *   block's own process group.
 *
 * After the blocks, the local stack's end-to-end checks run on the stack they left running and
 * on the report of their storm (walk-through-stack.ts): one stack and one storm for both.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/free-port.ts';
import { allDocs } from './doc-files.ts';
import { describeWalkThroughStack } from './walk-through-stack.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

type Mark = { readonly kind: 'runnable'; readonly exit: number } | { readonly kind: 'not-runnable'; readonly reason: string };

interface Block {
  /** The documentation file that holds the block (set by BLOCKS; blocksOf leaves it empty). */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly language: string;
  readonly body: readonly string[];
  readonly mark: Mark | undefined;
  /** The line before the fence, when it looks like a mark but is not a valid one. */
  readonly badMark: string | undefined;
}

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console']);

function markOf(line: string): { mark?: Mark; bad?: string } {
  const text = line.trim();
  if (!text.startsWith('<!--') || !/runnable/.test(text)) return {};
  const runnable = /^<!-- runnable(?:: exit (\d+))? -->$/.exec(text);
  if (runnable !== null) return { mark: { kind: 'runnable', exit: Number(runnable[1] ?? 0) } };
  const not = /^<!-- not runnable: (\S.*?) -->$/.exec(text);
  if (not !== null) return { mark: { kind: 'not-runnable', reason: not[1] ?? '' } };
  return { bad: text };
}

/** Every fenced block of a markdown text, with the mark on the line before it. */
function blocksOf(markdown: string, file = ''): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```|~~~)\s*([\w-]*)/.exec(lines[i] ?? '');
    if (open === null) continue;
    const indent = open[1]?.length ?? 0;
    const fence = open[2] ?? '```';
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !(lines[j] ?? '').trim().startsWith(fence); j++) body.push((lines[j] ?? '').slice(indent));
    const { mark, bad } = markOf(lines[i - 1] ?? '');
    blocks.push({ file, line: i + 1, language: open[3] ?? '', body, mark, badMark: bad });
    i = j;
  }
  return blocks;
}

function isShellBlock(block: Block): boolean {
  return SHELL_LANGUAGES.has(block.language) || block.body.some((l) => l.startsWith('$ '));
}

/** The commands of a block: its `$ ` lines in a console block, every line otherwise. */
function commandsOf(block: Block): string[] {
  if (block.language !== 'console') return [...block.body];
  const commands: string[] = [];
  let continuing = false;
  for (const line of block.body) {
    if (continuing) {
      commands.push(line);
    } else if (line.startsWith('$ ')) {
      commands.push(line.slice(2));
    } else {
      continue;
    }
    continuing = line.endsWith('\\');
  }
  return commands;
}

/** A user's shell: no node_modules/.bin on the PATH, none of npm's or vitest's own variables. */
function userEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|__VITEST|POWERTOOLS_)/i.test(name) || name === 'NODE_ENV' || name === 'NODE_OPTIONS') continue;
    env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !p.includes(`${sep}node_modules${sep}.bin`))
    .join(delimiter);
  return { ...env, ...extra };
}

interface BlockRun {
  readonly status: number | null;
  readonly output: string;
  readonly ms: number;
}

const BLOCKS = allDocs().flatMap(({ path, text }) => blocksOf(text, path));
const RUNNABLE = BLOCKS.filter((b) => b.mark?.kind === 'runnable');
/** The block that starts the stack in the background, and the storm's: the end-to-end checks read their output. */
const STACK_BLOCK = RUNNABLE.findIndex((b) => commandsOf(b).some((c) => /\bnpm start\b.*&\s*$/.test(c)));
const STORM_BLOCK = RUNNABLE.findIndex((b) => commandsOf(b).some((c) => /\bnpm run storm\b/.test(c)));

describe('the documentation command blocks: the marks', () => {
  it('marks every shell block runnable or not runnable (with a reason), and nothing else', () => {
    const unmarked = BLOCKS.filter((b) => isShellBlock(b) && b.mark === undefined).map((b) => `${b.file}:${b.line}: \`\`\`${b.language}`);
    const misplaced = BLOCKS.filter((b) => !isShellBlock(b) && b.mark !== undefined).map((b) => `${b.file}:${b.line}: \`\`\`${b.language}`);
    const malformed = BLOCKS.filter((b) => b.badMark !== undefined).map((b) => `${b.file}:${b.line}: ${b.badMark ?? ''}`);
    expect({ unmarked, misplaced, malformed }).toEqual({ unmarked: [], misplaced: [], malformed: [] });
  });

  it('runs the walk-through: the stack is started in the background and waited for before anything uses it', () => {
    expect(RUNNABLE.length).toBeGreaterThan(5);
    const commands = RUNNABLE.flatMap(commandsOf);
    const start = commands.findIndex((c) => /\bnpm start\b.*&\s*$/.test(c));
    expect(start, 'a runnable `npm start &`').toBeGreaterThanOrEqual(0);
    expect(commands[start + 1]).toMatch(/^npx retryproof --local wait\b/);
    // Every command that starts a stack in the background is followed by the wait.
    commands.forEach((c, i) => {
      if (/&\s*$/.test(c)) expect(commands[i + 1], c).toMatch(/^npx retryproof --local wait\b/);
    });
    // The docs must not pick the port or the data folder: the test (and a reader with
    // another stack running) sets them.
    for (const c of commands) expect(c).not.toMatch(/\b(PORT|RETRYPROOF_LOCAL_DIR)=/);
  });

  it('reads the convention the way it is written', () => {
    const blocks = blocksOf(
      [
        '<!-- runnable: exit 2 -->',
        '```console',
        '$ echo one \\',
        '  two',
        'one two',
        '```',
        '   <!-- not runnable: needs AWS -->',
        '   ```sh',
        '   aws s3 ls',
        '   ```',
        '<!-- runnable please -->',
        '```ts',
        'x',
        '```',
      ].join('\n'),
    );
    expect(blocks.map((b) => [b.line, b.language, b.mark, b.badMark])).toEqual([
      [2, 'console', { kind: 'runnable', exit: 2 }, undefined],
      [8, 'sh', { kind: 'not-runnable', reason: 'needs AWS' }, undefined],
      [12, 'ts', undefined, '<!-- runnable please -->'],
    ]);
    expect(commandsOf(blocks[0] as Block)).toEqual(['echo one \\', '  two']);
    expect(commandsOf(blocks[1] as Block)).toEqual(['aws s3 ls']);
  });
});

describe('the documentation command blocks, run as pasted, in order', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  /** Process groups of the blocks, each the bash that ran the block and what it left running. */
  const groups: number[] = [];
  const logs: string[] = [];
  let failed: string | undefined;
  let passed = 0;
  /** The stack log's size before and after the storm's block. */
  const stormWindow = { from: 0, to: 0 };
  const stackLog = (): string => (logs[STACK_BLOCK] === undefined ? '' : readFileSync(logs[STACK_BLOCK], 'utf8'));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-readme-'));
    env = userEnvironment({ PORT: String(await freePort()), RETRYPROOF_LOCAL_DIR: join(dir, 'local') });
  });

  afterAll(async () => {
    // The stack stops cleanly on SIGINT (it stops DynamoDB Local itself); anything left is killed.
    const alive = (pgid: number): boolean => {
      try {
        process.kill(-pgid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const signal = (s: NodeJS.Signals) => {
      for (const pgid of groups.filter(alive)) process.kill(-pgid, s);
    };
    signal('SIGINT');
    const deadline = Date.now() + 20_000;
    while (groups.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    signal('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }, 30_000);

  /** Runs one block in its own bash and process group; its output goes to a file, which what it leaves running keeps writing to. */
  function runBlock(index: number, block: Block, timeoutMs: number): Promise<BlockRun> {
    const script = join(dir, `block-${String(index + 1).padStart(2, '0')}.sh`);
    const log = `${script}.log`;
    writeFileSync(script, `${commandsOf(block).join('\n')}\n`);
    logs.push(log);
    const fd = openSync(log, 'w');
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-e', script], { cwd: REPO, env, detached: true, stdio: ['ignore', fd, fd] });
      closeSync(fd);
      if (child.pid !== undefined) groups.push(child.pid);
      const timer = setTimeout(() => {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      }, timeoutMs);
      child.on('error', reject);
      // 'exit', not 'close': a stack started with `&` keeps the output file open.
      child.on('exit', (code, signalName) => {
        clearTimeout(timer);
        resolve({ status: code ?? (signalName === null ? null : 128), output: readFileSync(log, 'utf8'), ms: performance.now() - started });
      });
    });
  }

  /** The last lines of every block's log so far, the stack's output included, for a failure message. */
  function context(): string {
    return logs
      .map((log) => {
        const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
        return `--- ${log.slice(dir.length + 1)} (last ${Math.min(lines.length, 25)} lines)\n${lines.slice(-25).join('\n')}`;
      })
      .join('\n');
  }

  RUNNABLE.forEach((block, index) => {
    const mark = block.mark as Extract<Mark, { kind: 'runnable' }>;
    const first = commandsOf(block)[0] ?? '';
    // The storm settles a few hundred deliveries; every other block takes seconds.
    const timeoutMs = /npm run storm/.test(commandsOf(block).join('\n')) ? 150_000 : 90_000;
    it(`${block.file}:${block.line}: \`${first}\` exits ${mark.exit}`, async () => {
      // Prepare
      expect(failed, 'an earlier block failed; this one builds on it').toBeUndefined();
      // Act
      if (index === STORM_BLOCK) stormWindow.from = Buffer.byteLength(stackLog());
      const run = await runBlock(index, block, timeoutMs);
      if (index === STORM_BLOCK) stormWindow.to = Buffer.byteLength(stackLog());
      // Assess
      if (run.status !== mark.exit) failed = `${block.file}:${block.line}`;
      else passed++;
      expect(run.status, `exit status after ${Math.round(run.ms)} ms\n${context()}`).toBe(mark.exit);
    }, timeoutMs + 10_000);
  });

  // The end-to-end checks, on the stack the blocks left running (issue 45: one stack, one storm).
  describeWalkThroughStack({
    env: () => env,
    stackLog,
    stormWindow: () => stormWindow,
    blocksPassed: () => failed === undefined && passed === RUNNABLE.length && STACK_BLOCK >= 0 && STORM_BLOCK >= 0,
  });
});
