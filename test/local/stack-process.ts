/**
 * The local stack and the project's scripts as child processes, the way a user runs
 * them: Node 24 (this test's own runtime) on the .ts entry points, in the repository.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../local/free-port.ts';
import { resolveTarget } from '../../cli/target.ts';
import type { Target } from '../../cli/target.ts';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The timings a test stack runs with unless a test says otherwise: seconds, not minutes. */
export const FAST_STACK = {
  // 2 s, not 1: on a loaded machine a 1 s visibility lets a slow batch's message come
  // back while it still runs, and those hand-backs use up the receives.
  RETRYPROOF_VISIBILITY_TIMEOUT_S: '2',
  RETRYPROOF_ACTION_TIME_S: '1',
  RETRYPROOF_RECONCILE_EVERY_S: '0',
} as const;

/**
 * The action time of the stacks that run a storm: 2 s, not FAST_STACK's 1. A 1 s action time
 * gives a lease of 3 s and an action deadline of 1 s (leaseOfActionTime: never under 1 s), and
 * the storm plans keys that fail twice and then succeed on a budget of 3: one more attempt
 * lost (a deadline missed under load, the executor restart) leaves such a key FAILED. Under the
 * whole suite's load (load averages of 7 on 2 cores) the storms ended 1 to 4 keys planned to
 * complete FAILED; the failing runs kept no lastError, so the deadline is the likely cause, not
 * a proven one: alone, at load 5, both storms passed on 1 s. 2 s gives a 4 s deadline.
 */
export const STORM_ACTION_TIME = { RETRYPROOF_ACTION_TIME_S: '2' } as const;

/**
 * The environment of a stack of its own: this process's, a free port, `dir` for its data and
 * endpoints.json, the fast timings, then `overrides` (a variable set to undefined is removed).
 */
export async function stackEnv(dir: string, overrides: Readonly<Record<string, string | undefined>> = {}): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(await freePort()), RETRYPROOF_LOCAL_DIR: dir, ...FAST_STACK };
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) Reflect.deleteProperty(env, name);
    else env[name] = value;
  }
  return env;
}

/** Whether `port` on loopback can be listened on now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => {
      resolve(false);
    });
    server.listen(port, '127.0.0.1', () => {
      server.close(() => {
        resolve(true);
      });
    });
  });
}

/** A loopback port with the `count - 1` ports after it free too: a stack of `count` Regions takes them all. */
export async function freePortRun(count: number): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const first = await freePort();
    if (first + count - 1 > 65_535) continue;
    const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => canListen(first + i + 1)));
    if (rest.every(Boolean)) return first;
  }
  throw new Error(`no run of ${count} free ports found`);
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node <script> ...args` in the repository and collects its output. */
export function runScript(script: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} ${args.join(' ')} ran over ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface StackProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Every stdout line so far. */
  readonly lines: string[];
  readonly stderr: () => string;
  /** Sends SIGINT and resolves with the exit code once the process has ended. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  /** Arguments after `scripts/start.ts`, such as `--config PATH`. @default none */
  readonly args?: readonly string[];
  /** The working directory, which relative paths of a configuration resolve against. @default the repository */
  readonly cwd?: string;
  /** @default 90_000 */
  readonly readyTimeoutMs?: number;
}

/** Starts `scripts/start.ts` and resolves once it printed its ready line. */
export function startStack(env: NodeJS.ProcessEnv, options: StartOptions = {}): Promise<StackProcess> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 90_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`${REPO}scripts/start.ts`, ...(options.args ?? [])], {
      cwd: options.cwd ?? REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let partial = '';
    let stderr = '';
    let ready = false;
    const exited = new Promise<number | null>((done) => {
      child.on('exit', (code) => {
        done(code);
      });
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no ready line within ${readyTimeoutMs} ms\n${lines.join('\n')}\n${stderr}`));
    }, readyTimeoutMs);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      partial += chunk.toString();
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        const match = /ready at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (match?.[1] !== undefined && !ready) {
          ready = true;
          clearTimeout(timer);
          resolve({
            child,
            url: match[1],
            lines,
            stderr: () => stderr,
            stop: (signal = 'SIGINT') => {
              if (child.exitCode === null && child.signalCode === null) child.kill(signal);
              return exited;
            },
          });
        }
      }
    });
    child.on('exit', (code) => {
      if (!ready) {
        clearTimeout(timer);
        reject(new Error(`the stack exited with ${String(code)} before it was ready\n${lines.join('\n')}\n${stderr}`));
      }
    });
  });
}

/** The DynamoDB Local JVMs whose command line names `dir` (their data folder is in it). */
export function dynamoJvmsOf(dir: string): number[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes('DynamoDBLocal') && line.includes(dir))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/**
 * Stops a test's stack as a person does, with Ctrl-C (SIGINT), and waits for it to exit:
 * SIGKILL instead would leave its DynamoDB Local JVM behind. A stack still up after
 * `graceMs` is killed, and any JVM left on `dir` with it.
 * @returns the exit code, or null when the stack had to be killed
 */
export async function shutDown(stack: StackProcess | undefined, dir: string, graceMs = 60_000): Promise<number | null> {
  let code: number | null = null;
  if (stack !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => {
        resolve('late');
      }, graceMs);
    });
    const exited = await Promise.race([stack.stop('SIGINT'), late]);
    clearTimeout(timer);
    code = exited === 'late' ? await stack.stop('SIGKILL').then(() => null) : exited;
  }
  for (const pid of dynamoJvmsOf(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return code;
}

/** Probes until the answer is defined, every 200 ms; throws naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs `work` on the CLI's view of the local stack in `env`'s folder, and closes its clients. */
export async function withLocalTarget<T>(env: NodeJS.ProcessEnv, work: (target: Target) => Promise<T>): Promise<T> {
  const target = await resolveTarget({ local: true }, env);
  try {
    return await work(target);
  } finally {
    target.close();
  }
}
