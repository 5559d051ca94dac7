import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { durationFlag } from '../../cli/args.ts';
import type { Command } from '../../cli/command.ts';
import { COMMANDS } from '../../cli/commands/index.ts';
import { findCommand, runCli } from '../../cli/main.ts';
import { REPO } from '../local/stack-process.ts';

interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}, commands = COMMANDS): Promise<Captured> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    argv,
    {
      stdout: (t) => (stdout += t),
      stderr: (t) => (stderr += t),
      stderrIsTty: false,
      env,
    },
    commands,
  );
  return { code, stdout, stderr };
}

describe('the retryproof CLI', () => {
  let emptyDir: string;
  beforeAll(async () => {
    emptyDir = await mkdtemp(join(tmpdir(), 'retryproof-cli-'));
  });
  afterAll(async () => {
    await rm(emptyDir, { recursive: true, force: true });
  });

  it('answers an unknown command with exit code 2 and the list of commands', async () => {
    const out = await cli(['frobnicate', '--local']);
    expect(out.code).toBe(2);
    expect(out.stderr.split('\n')[0]).toBe('retryproof: unknown command "frobnicate"');
    expect(out.stderr).toContain('usage: retryproof <command>');
    for (const command of COMMANDS) expect(out.stderr).toContain(command.name);
  });

  it.each([
    [['ledgr', '--local'], 'retryproof: unknown command "ledgr"; did you mean "ledger"?'],
    [['redrve', '--local'], 'retryproof: unknown command "redrve"; did you mean "redrive"?'],
    [['dlq', 'lst', '--local'], 'retryproof: unknown subcommand "dlq lst"; did you mean "dlq list"?'],
    [['routes', 'puase', 'demo', '--local'], 'retryproof: unknown subcommand "routes puase"; did you mean "routes pause"?'],
  ])('suggests the command meant for %j, exit code 2', async (argv, firstLine) => {
    const out = await cli(argv);
    expect(out.code).toBe(2);
    expect(out.stderr.split('\n')[0]).toBe(firstLine);
  });

  it('asks for a subcommand of dlq, listing them, and for a command at all', async () => {
    const dlq = await cli(['dlq', '--local']);
    expect(dlq.code).toBe(2);
    expect(dlq.stderr).toContain('"dlq" needs a subcommand: dlq list, dlq redrive');
    expect(dlq.stderr).toContain('usage: retryproof dlq <subcommand>');
    expect((await cli([])).code).toBe(2);
  });

  it('prints general help and each command\'s own help with exit code 0', async () => {
    const general = await cli(['--help']);
    expect(general.code).toBe(0);
    expect(general.stdout).toContain('--stack NAME');
    const own = await cli(['dlq', 'list', '--help']);
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('retryproof dlq list [--max N]');
  });

  it('refuses bad flags and arguments with exit code 2, naming the problem', async () => {
    expect(await cli(['ledger'])).toMatchObject({ code: 2, stderr: expect.stringContaining('say which stack: --local, or --stack NAME') as unknown });
    expect(await cli(['ledger', '--local', '--stack', 'X'])).toMatchObject({ code: 2, stderr: expect.stringContaining('not both') as unknown });
    expect(await cli(['ledger', '--local', '--window', 'soon'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--window must be a duration') as unknown });
    expect(await cli(['inspect', 'demo', '--local'])).toMatchObject({ code: 2, stderr: expect.stringContaining('inspect takes <route> <key>, got demo') as unknown });
    expect(await cli(['dlq', 'list', '--local', '--bogus'])).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown option --bogus\n') as unknown });
  });

  it('says the local stack is not running, with exit code 1 and no stack trace', async () => {
    const out = await cli(['--local', 'ledger'], { RETRYPROOF_LOCAL_DIR: emptyDir });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(`retryproof ledger: no local stack is running in ${emptyDir} (no endpoints.json); start one with: npm start\n`);
  });

  it('treats an endpoints.json whose process is gone as a stopped stack', async () => {
    await writeFile(
      join(emptyDir, 'endpoints.json'),
      JSON.stringify({ version: 1, pid: 2 ** 22 + 12345, httpUrl: 'http://127.0.0.1:1', eventsTable: 'x' }),
    );
    const out = await cli(['--local', 'dlq', 'list'], { RETRYPROOF_LOCAL_DIR: emptyDir });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/is not running \(pid \d+ is gone\); start it with: npm start/);
  });

  it('finds the command wherever the global flags stand', () => {
    const found = findCommand(['--stack', 'Prod', '--region', 'eu-west-1', 'dlq', 'redrive', '--json']);
    expect(found !== undefined && 'command' in found ? [found.command.name, found.rest] : found).toEqual([
      'dlq redrive',
      ['--stack', 'Prod', '--region', 'eu-west-1', '--json'],
    ]);
  });

  it('runs a command added to the table, with its own flags, and nothing else to change', async () => {
    const hello: Command = {
      name: 'example wave',
      summary: 'an example',
      usage: 'retryproof example wave <route> [--reason TEXT]',
      options: { reason: { type: 'string' } },
      args: ['route'],
      run: (ctx, { values, positionals }) => {
        ctx.print(`${String(positionals[0])} ${String(values.reason)} ${String(ctx.json)}\n`);
        return Promise.resolve(0);
      },
    };
    const out = await cli(['example', 'wave', 'demo', '--reason', 'storm', '--json'], {}, [...COMMANDS, hello]);
    expect(out).toEqual({ code: 0, stdout: 'demo storm true\n', stderr: '' });
  });

  it('turns an unexpected failure into one line saying what to try, with the stack trace only under RETRYPROOF_DEBUG=1', async () => {
    // Prepare: a command that fails the way a bug would.
    const broken: Command = {
      name: 'broken',
      summary: 'fails',
      usage: 'retryproof broken',
      options: {},
      args: [],
      run: () => Promise.reject(new TypeError('cannot read properties of undefined\n    at somewhere')),
    };
    // Act
    const plain = await cli(['broken'], {}, [...COMMANDS, broken]);
    const debug = await cli(['broken'], { RETRYPROOF_DEBUG: '1' }, [...COMMANDS, broken]);
    // Assess
    expect(plain).toEqual({
      code: 1,
      stdout: '',
      stderr: 'retryproof broken: TypeError: cannot read properties of undefined (unexpected: run again with RETRYPROOF_DEBUG=1 for the stack trace, and report it)\n',
    });
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  it('says what to check when AWS cannot be reached', async () => {
    const offline: Command = {
      name: 'offline',
      summary: 'fails',
      usage: 'retryproof offline',
      options: {},
      args: [],
      run: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' })),
    };
    const out = await cli(['offline'], {}, [...COMMANDS, offline]);
    expect(out.code).toBe(1);
    expect(out.stderr).toBe('retryproof offline: Error: connect ECONNREFUSED 10.0.0.1:443: AWS could not be reached; check the network (and a proxy), then retry\n');
  });

  it('reads durations for --window', () => {
    expect(durationFlag('window', '24h')).toBe(86_400_000);
    expect(durationFlag('window', '90s')).toBe(90_000);
    expect(durationFlag('window', '7d')).toBe(7 * 86_400_000);
  });

  it('runs as `npx retryproof` on Node 24, from the package bin', () => {
    // `--no`: never install anything; `--`: the rest is the command's, not npx's.
    const out = spawnSync('npx', ['--no', '--', 'retryproof', '--help'], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('usage: retryproof <command>');
  }, 60_000);
});
