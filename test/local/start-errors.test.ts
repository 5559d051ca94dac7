/** `npm start` refuses what it cannot run with one line and exit code 2, never a stack trace. */
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from './stack-process.ts';

describe('npm start on a bad setting, a taken port, or no Java', () => {
  let dir: string;
  let busy: Server;
  let busyPort: number;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-start-'));
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => { resolve(); }));
    busyPort = (busy.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => busy.close(() => { resolve(); }));
    await rm(dir, { recursive: true, force: true });
  });

  it('says which variable is wrong', async () => {
    const out = await runScript('local/start.ts', [], { ...process.env, RETRYPROOF_LOCAL_DIR: dir, RETRYPROOF_VISIBILITY_TIMEOUT_S: 'fast' });
    expect(out.code).toBe(2);
    expect(out.stderr).toBe('retryproof local: RETRYPROOF_VISIBILITY_TIMEOUT_S must be a whole number from 1 to 43200, got "fast"\n');
  });

  it('says which port is taken, before starting anything', async () => {
    const out = await runScript('local/start.ts', [], { ...process.env, RETRYPROOF_LOCAL_DIR: dir, PORT: String(busyPort) });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`retryproof local: port ${busyPort} is already in use`);
    expect(out.stderr).not.toMatch(/\n\s+at /);
  });

  it('says Java is missing and what to install', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => { resolve(p); });
      });
    });
    // Only Node on the PATH: the `java` that DynamoDB Local needs is not found.
    const out = await runScript('local/start.ts', [], { ...process.env, RETRYPROOF_LOCAL_DIR: dir, PORT: String(port), PATH: dirname(process.execPath) });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('java was not found: install Java 17 or newer');
    expect(out.stderr).not.toMatch(/\n\s+at /);
  });
});
