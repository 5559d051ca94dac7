/**
 * `retryproof start --help` says what a Ctrl-C exits with: the stack's own 0, and the 130 that npx
 * reports for any Ctrl-C (its shell is interrupted too), with the way to get the stack's own code.
 * A second `retryproof start` in a folder whose stack runs refuses with one line, before any banner.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.ts';
import { freePort } from '../../local/free-port.ts';
import { runScript } from '../local/stack-process.ts';

describe('retryproof start --help, exit codes', () => {
  it('says a clean Ctrl-C is 0, and that npx reports 130 for it', async () => {
    let out = '';
    const code = await runCli(['start', '--help'], { stdout: (t) => (out += t), stderr: () => undefined, stderrIsTty: false, env: {} });
    const paragraph = out.slice(out.indexOf('Exit codes:')).replace(/\s+/g, ' ');
    expect(code).toBe(0);
    expect(paragraph).toContain('Exit codes: 0 stopped by Ctrl-C;');
    expect(paragraph).toContain('Through npx, or an npm script that does not exec it, npm reports 130 after any Ctrl-C, the clean stop too');
    expect(paragraph).toContain('A script "exec retryproof start"');
  });
});

describe('retryproof start, a second time in the same folder', () => {
  it('refuses with its one line and exit code 2, no banner above it', async () => {
    // Prepare: the folder's endpoints.json names a live process (this test's) as its stack.
    const dir = await mkdtemp(join(tmpdir(), 'retryproof-start-twice-'));
    await writeFile(join(dir, 'endpoints.json'), JSON.stringify({ version: 1, pid: process.pid, httpUrl: 'http://127.0.0.1:1', eventsTable: 't' }));
    try {
      // Act
      const out = await runScript('cli/retryproof.ts', ['start'], { ...process.env, RETRYPROOF_LOCAL_DIR: dir, PORT: String(await freePort()) });
      // Assess
      expect(out.code).toBe(2);
      expect(out.stdout).toBe('');
      expect(out.stderr).toBe(`retryproof local: a local stack already runs in ${dir} (pid ${process.pid}): stop it, or set RETRYPROOF_LOCAL_DIR to another folder\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
