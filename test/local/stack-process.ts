/**
 * The local stack and the project's scripts as child processes, the way a user runs
 * them: Node 24 (this test's own runtime) on the .ts entry points, in the repository.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

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

/** Starts `local/start.ts` and resolves once it printed its ready line. */
export function startStack(env: NodeJS.ProcessEnv, readyTimeoutMs = 90_000): Promise<StackProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['local/start.ts'], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
