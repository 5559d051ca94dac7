/**
 * `npm run send` and `npm run storm`, which are `retryproof send` and `retryproof storm`, refuse bad
 * flags with exit code 2 and say when no stack runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../local/stack-process.ts';

describe('send and storm on a bad command line or without a stack', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-usage-'));
    env = { ...process.env, RETRYPROOF_LOCAL_DIR: dir };
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['scripts/send.ts', ['--dup', 'x'], '--dup must be a whole number from 0 to 1000, got "x"'],
    ['scripts/send.ts', ['--simulate', '{nope'], '--simulate must be JSON'],
    ['scripts/send.ts', ['--url', 'http://127.0.0.1:1'], '--url needs --secret'],
    ['scripts/send.ts', ['--frobnicate'], 'send: unknown option --frobnicate\n'],
    ['scripts/send.ts', ['--dpu', '3'], 'send: unknown option --dpu; did you mean --dup?\n'],
    ['scripts/send.ts', ['--secret'], 'send: --secret needs a value\n'],
    ['scripts/storm.ts', ['--event', '5'], 'storm: unknown option --event; did you mean --events?\n'],
    ['scripts/storm.ts', ['--no-restrt'], 'storm: unknown option --no-restrt; did you mean --no-restart?\n'],
    ['scripts/storm.ts', ['--events', '0'], '--events must be a whole number from 1 to 100000, got "0"'],
    ['scripts/storm.ts', ['--crash', '2'], '--crash must be a number from 0 to 1, got "2"'],
    ['scripts/storm.ts', ['--ladder', '1s,later'], '--ladder must list durations'],
    ['scripts/storm.ts', ['--regions', '--url', 'http://127.0.0.1:1', '--secret', 's'], '--regions works on the local stack (npm start -- --regions 2); not with --url or --stack'],
    ['scripts/send.ts', ['--url', 'http://127.0.0.1:1', '--secret', 's', '--region', 'local-2'], "--region picks a Region of the local stack; with --url, give that Region's URL instead"],
  ])('%s %j exits 2 naming the problem, with the usage', async (script, args, message) => {
    const out = await runScript(script, args, env);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(message);
    expect(out.stderr).toContain('usage: retryproof ');
  });

  it('shows the usage\'s synopsis and the line of the flag meant, not the whole help', async () => {
    const out = await runScript('scripts/storm.ts', ['--setle-timeout', '9'], env);
    expect(out.code).toBe(2);
    expect(out.stderr.trimEnd().split('\n')).toEqual([
      'retryproof storm: unknown option --setle-timeout; did you mean --settle-timeout?',
      '',
      'usage: retryproof storm [options]   (in the retryproof repository also: npm run storm -- [options])',
      expect.stringMatching(/^ {2}--settle-timeout S {4}seconds to wait/) as unknown,
      '(retryproof storm --help for all its flags)',
    ]);
  });

  it.each([['scripts/send.ts'], ['scripts/storm.ts']])('%s --help wins over a mistyped flag: the usage, exit code 0', async (script) => {
    const out = await runScript(script, ['--bogus', '--help'], env);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^usage: retryproof (send|storm) /);
    expect(out.stderr).toBe('');
  });

  it.each([['scripts/send.ts'], ['scripts/storm.ts']])('%s says no local stack is running, exit code 1', async (script) => {
    const out = await runScript(script, [], env);
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toMatch(/no local stack is running in .* start one with: npm start$/);
  });
});
