/**
 * `retryproof start --help` says what a Ctrl-C exits with: the stack's own 0, and the 130 that npx
 * reports for any Ctrl-C (its shell is interrupted too), with the way to get the stack's own code.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.ts';

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
