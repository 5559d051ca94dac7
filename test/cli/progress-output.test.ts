/**
 * Progress lines end where the work ended: a log file gets at most a line a second, but the
 * last state is written before the result, so `0/2 moved` is never the last word above
 * `moved 2 messages`; a terminal's line, rewritten in place, is ended before the result so
 * the two are not glued together.
 */
import { describe, expect, it } from 'vitest';
import type { Command } from '../../cli/command.ts';
import { runCli } from '../../cli/main.ts';

/** A command that reports three steps at once, then its result. */
const move: Command = {
  name: 'move',
  summary: 'moves two things',
  usage: 'retryproof move',
  options: {},
  args: [],
  run(ctx) {
    for (const n of [0, 1, 2]) ctx.progress(`redrive: ${n}/2 moved`);
    ctx.print('moved 2 messages\n');
    return Promise.resolve(0);
  },
};

async function linesOf(stderrIsTty: boolean, json = false): Promise<string[]> {
  const lines: string[] = [];
  const code = await runCli(['move', ...(json ? ['--json'] : [])], { stdout: (t) => lines.push(`out ${t}`), stderr: (t) => lines.push(`err ${t}`), stderrIsTty, env: {} }, [move]);
  expect(code).toBe(0);
  return lines;
}

describe('progress before a result', () => {
  it('to a log file: the first step, then the last one, then the result', async () => {
    expect(await linesOf(false)).toEqual(['err redrive: 0/2 moved\n', 'err redrive: 2/2 moved\n', 'out moved 2 messages\n']);
  });

  it('to a terminal: every step in place, the line ended, then the result', async () => {
    expect(await linesOf(true)).toEqual([
      'err \r\x1b[Kredrive: 0/2 moved',
      'err \r\x1b[Kredrive: 1/2 moved',
      'err \r\x1b[Kredrive: 2/2 moved',
      'err \n',
      'out moved 2 messages\n',
    ]);
  });

  it('with --json: no progress at all', async () => {
    expect(await linesOf(false, true)).toEqual(['out moved 2 messages\n']);
  });
});

describe('whole progress lines (wait)', () => {
  /** A wait that sees the same reason twice, then another, then is done. */
  const waits: Command = {
    name: 'waits',
    summary: 'waits',
    usage: 'retryproof waits',
    options: {},
    args: [],
    run(ctx) {
      for (const reason of ['no endpoints.json yet', 'no endpoints.json yet', 'the gateway does not answer']) ctx.progress(`waiting: ${reason}`, { whole: true });
      ctx.print('ready\n');
      return Promise.resolve(0);
    },
  };

  it('to a terminal: each new reason on a line of its own, never rewritten, so another process\'s line cannot run into it', async () => {
    const lines: string[] = [];
    await runCli(['waits'], { stdout: (t) => lines.push(`out ${t}`), stderr: (t) => lines.push(`err ${t}`), stderrIsTty: true, env: {} }, [waits]);
    expect(lines).toEqual(['err waiting: no endpoints.json yet\n', 'err waiting: the gateway does not answer\n', 'out ready\n']);
  });
});
