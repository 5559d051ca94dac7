/**
 * Ctrl-C while an action runs, with `npm start` (scripts/start.ts) as a child process: the
 * stop says what it waits for and exits 0 once the action is done; a second Ctrl-C
 * abandons the action, and the work still completes once, after the next start.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inspectDelivery } from '../../cli/operations/inspect-delivery.ts';
import { resolveTarget } from '../../cli/target.ts';
import { runScript, shutDown, stackEnv, startStack } from './stack-process.ts';
import type { StackProcess } from './stack-process.ts';

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('stopping the local stack while an action runs', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let stack: StackProcess | undefined;

  const statusOf = async (key: string): Promise<{ status?: string; runs?: number } | undefined> => {
    const target = await resolveTarget({ local: true }, env);
    try {
      return (await inspectDelivery(target, 'demo', key)).record ?? undefined;
    } finally {
      target.close();
    }
  };
  /** Sends one slow delivery and resolves with its key once its action runs. */
  const sendSlow = async (delayMs: number): Promise<string> => {
    const sent = await runScript('scripts/send.ts', ['--simulate', JSON.stringify({ delayMs }), '--json'], env);
    expect(sent.code, sent.stderr).toBe(0);
    const key = (JSON.parse(sent.stdout) as { key: string }).key;
    await until('the action to run', async () => ((await statusOf(key))?.status === 'EXECUTING' ? true : undefined), 30_000);
    return key;
  };
  const line = (s: StackProcess, pattern: RegExp, timeoutMs = 30_000): Promise<string> =>
    until(`a line matching ${String(pattern)}`, () => s.lines.find((l) => pattern.test(l)), timeoutMs);
  const exited = (s: StackProcess): Promise<number | null> =>
    new Promise((resolve) => {
      if (s.child.exitCode !== null || s.child.signalCode !== null) resolve(s.child.exitCode);
      else s.child.once('exit', (code) => { resolve(code); });
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-stop-'));
    // A 3 s action time: a 9 s lease, the action's deadline about 7 s in.
    env = await stackEnv(dir, { RETRYPROOF_ACTION_TIME_S: '3' });
  });
  afterEach(async () => {
    // Each test stops its stack; after a failure it may still run.
    await shutDown(stack, dir);
    stack = undefined;
  }, 90_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('says what it waits for, lets the action finish, and exits 0', async () => {
    // Prepare
    stack = await startStack(env);
    const s = stack;
    const key = await sendSlow(4_000);
    // Act: one Ctrl-C under `npm start` arrives twice (the terminal's, and npm's forwarded copy).
    s.child.kill('SIGINT');
    await line(s, /^retryproof local: SIGINT, stopping$/);
    s.child.kill('SIGINT');
    // Assess: one keypress, one clean stop.
    const waiting = await line(s, /^retryproof local: waiting for /);
    expect(waiting).toMatch(/^retryproof local: waiting for 1 running action, at most \d+ s; Ctrl-C again to abandon it \(nothing is lost: its message comes back\)$/);
    expect(await exited(s)).toBe(0);
    const completed = s.lines.findIndex((l) => l.includes(`exec demo/${key}  attempt 1 completed`));
    expect(completed).toBeGreaterThan(s.lines.indexOf(waiting));
    expect(s.lines.at(-1)).toBe('retryproof local: stopped');
    expect(s.lines.some((l) => l.includes('SIGINT again'))).toBe(false);
  }, 120_000);

  it('abandons the action on a second Ctrl-C, and the work completes once after the next start', async () => {
    // Prepare
    stack = await startStack(env);
    const first = stack;
    const key = await sendSlow(5_000);
    // Act: two Ctrl-C, the second once the first has said what it waits for.
    first.child.kill('SIGINT');
    const sentAt = Date.now();
    await line(first, /^retryproof local: waiting for 1 running action/);
    // A person's second keypress: later than the copies of one keypress, which arrive together.
    while (Date.now() - sentAt < 1_500) await new Promise((r) => setTimeout(r, 50));
    first.child.kill('SIGINT');
    // Assess: the stop does not wait for the action, and says why nothing is lost.
    expect(await line(first, /abandoning/)).toBe(
      "retryproof local: SIGINT again, abandoning 1 running action: nothing is lost, its record's lease runs out and its message comes back on the next start",
    );
    expect(await exited(first)).toBe(130);
    expect(first.lines.some((l) => l.includes(`exec demo/${key}  attempt 1 completed`))).toBe(false);
    // Act: start again on the same folder.
    stack = await startStack(env);
    // Assess: the message came back after the lease, and the action ran once more, to completion.
    const record = await until('the abandoned work to complete', async () => {
      const r = await statusOf(key);
      return r?.status === 'COMPLETED' ? r : undefined;
    }, 60_000);
    expect(record.runs).toBe(2);
    const ledger = await runScript('cli/retryproof.ts', ['--local', 'ledger', '--json'], env);
    expect((JSON.parse(ledger.stdout) as { idempotencyKey: string }[]).filter((e) => e.idempotencyKey === key)).toHaveLength(1);
    expect(await stack.stop('SIGINT')).toBe(0);
  }, 180_000);
});
