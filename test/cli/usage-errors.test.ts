/**
 * Every usage error of `retryproof` is one line saying what was wrong (with the flag or
 * command meant, for a near miss), then an excerpt of that command's usage; `--help` at every
 * level prints help and exits 0; the exit codes are documented in the help.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../cli/commands/index.ts';
import { EXIT } from '../../cli/errors.ts';
import { EXIT_CODES_HELP, runCli } from '../../cli/main.ts';
import { nearest } from '../../cli/suggest.ts';
import { usageExcerpt } from '../../cli/usage-excerpt.ts';
import { runScript } from '../local/stack-process.ts';

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stderrIsTty: false, env: {} });
  return { code, stdout, stderr };
}

describe('a mistyped flag', () => {
  it('is one line naming the flag and the one meant, then the command\'s synopsis and that flag\'s line', async () => {
    // Act
    const out = await cli(['ledger', '--local', '--windw', '1h']);
    // Assess
    expect(out.code).toBe(EXIT.usage);
    const lines = out.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('retryproof ledger: unknown option --windw; did you mean --window?');
    expect(lines[2]).toMatch(/^usage: retryproof ledger \[--window 24h\]/);
    expect(lines[3]).toMatch(/^ {2}--window D {4}how far back/);
    expect(lines.at(-1)).toBe('(retryproof ledger --help for all its flags)');
    expect(out.stderr).not.toContain('positional argument');
  });

  it.each([
    [['--lcoal', 'ledger'], 'retryproof ledger: unknown option --lcoal; did you mean --local?'],
    [['ledger', '--local', '--jsno'], 'retryproof ledger: unknown option --jsno; did you mean --json?'],
    [['inspect', 'demo', 'k', '--local', '--with-bdy'], 'retryproof inspect: unknown option --with-bdy; did you mean --with-body?'],
    [['dlq', 'list', '--local', '--window', '1h'], 'retryproof dlq list: unknown option --window; --window is a flag of ledger, reconcile'],
    [['ledger', '--local', '--since', '1h'], 'retryproof ledger: unknown option --since; did you mean --window? (--since is a flag of redrive)'],
    [['reconcile', '--local', '--since', '1h'], 'retryproof reconcile: unknown option --since; did you mean --window? (--since is a flag of redrive)'],
    [['redrive', '--local', '--window', '1h'], 'retryproof redrive: unknown option --window; did you mean --since? (--window is a flag of ledger, reconcile)'],
    [['ledger', '--local', '--window'], 'retryproof ledger: --window needs a value'],
    [['ledger', '--local', '--window', '--json'], 'retryproof ledger: --window needs a value, got the flag --json (write --window=--json if that is the value)'],
    [['ledger', '--local', '--json=yes'], 'retryproof ledger: --json takes no value, got "yes"'],
    [['reconcile', '--local', '--window', '5m', '--settle', '10m'], 'retryproof reconcile: --window 5m must be longer than --settle 10m: a run reconciles [now - window, now - settle]'],
  ])('%j: exit code 2 and %j', async (argv, firstLine) => {
    const out = await cli(argv);
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe(firstLine);
  });

  it("points ledger --since to ledger's own --window, and shows that flag's line of the usage", async () => {
    const out = await cli(['ledger', '--local', '--since', '1h']);
    expect(out.stderr.split('\n').slice(2)).toEqual([
      expect.stringMatching(/^usage: retryproof ledger /) as unknown,
      expect.stringMatching(/^ {2}--window D {4}how far back/) as unknown,
      '(retryproof ledger --help for all its flags)',
      '',
    ]);
  });

  it('gets no guess when nothing is near', async () => {
    const out = await cli(['ledger', '--local', '--frobnicate']);
    expect(out.stderr.split('\n')[0]).toBe('retryproof ledger: unknown option --frobnicate');
  });

  it('is refused by the real CLI process the same way, without a stack trace', async () => {
    const out = await runScript('cli/retryproof.ts', ['--local', 'reconcile', '--setle', '0s'], { ...process.env });
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe('retryproof reconcile: unknown option --setle; did you mean --settle?');
    expect(out.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('--help', () => {
  const levels: string[][] = [
    ['--help'],
    ['-h'],
    ['help'],
    ['dlq', '--help'],
    ['dlq', '-h'],
    ['routes', '--help'],
    ['help', 'routes'],
    ['--local', 'routes', '-h'],
    ...COMMANDS.map((c) => [...c.name.split(' '), '--help']),
    ...COMMANDS.map((c) => ['help', ...c.name.split(' ')]),
  ];
  it.each(levels)('%j prints help on stdout and exits 0', async (...argv) => {
    const out = await cli(argv);
    expect(out).toMatchObject({ code: EXIT.ok, stderr: '' });
    expect(out.stdout).toMatch(/^usage: retryproof /);
  });

  it('lists a group\'s subcommands', async () => {
    const out = await cli(['dlq', '--help']);
    expect(out.stdout).toContain('  dlq list     list the DLQ without consuming it');
    expect(out.stdout).toContain('  dlq redrive  send the DLQ back to the work queue');
  });

  it('wins over a mistake on the same line', async () => {
    const out = await cli(['ledger', '--windw', '--help']);
    expect(out.code).toBe(EXIT.ok);
    expect(out.stdout).toContain('usage: retryproof ledger');
  });

  it('documents every exit code the CLI uses, once, in the general help', async () => {
    const out = await cli(['--help']);
    expect(out.stdout).toContain(EXIT_CODES_HELP);
    for (const code of Object.values(EXIT)) expect(out.stdout).toMatch(new RegExp(`^ {2}${code} {2}\\S`, 'm'));
  });
});

describe('nearest', () => {
  it('finds a slip of the fingers: a missing, swapped or extra letter, or a prefix', () => {
    const flags = ['--window', '--route', '--key', '--json', '--local', '--help', '-h'];
    expect(nearest('--windw', flags)).toBe('--window');
    expect(nearest('--jsno', flags)).toBe('--json');
    expect(nearest('--routes', flags)).toBe('--route');
    expect(nearest('--win', flags)).toBe('--window');
  });

  it('guesses nothing for another word, or for a one-letter flag', () => {
    expect(nearest('--frobnicate', ['--window', '--route'])).toBeUndefined();
    expect(nearest('-x', ['-h', '--help'])).toBeUndefined();
  });
});

describe('usageExcerpt', () => {
  it('keeps the synopsis and the lines of the flags the message names, even two on one line', () => {
    const usage = 'usage: npm run storm -- [options]\n\nIntro naming --url.\n\n  --events N   events\n  --url URL --secret S  another receiver\n  -h, --help   this text';
    expect(usageExcerpt(usage, '--secret is wrong', '(hint)')).toBe('usage: npm run storm -- [options]\n  --url URL --secret S  another receiver\n(hint)');
    expect(usageExcerpt(usage, 'nothing named', '(hint)')).toBe('usage: npm run storm -- [options]\n(hint)');
  });
});
