/**
 * A misspelt action: the error suggests the action meant, never adding the misspelling as a
 * new one, and reaches the user as its one line, with no line of retryproof's source above it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, assertActionsSupplied, resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { readLocalSettings, SettingsError } from '../../local/local-settings.ts';
import { config } from '../../retryproof.config.ts';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const misspelt = { ...config, routes: config.routes.map((r) => ({ ...r, action: 'handleStripeEvnt' })) };

describe('a route whose action is misspelt', () => {
  it('is refused with the near name suggested, not the misspelling as an action to add', () => {
    // Act
    const act = () => { assertActionsSupplied(resolveConfig(misspelt), Object.keys(config.actions ?? {})); };
    // Assess
    expect(act).toThrow(ConfigError);
    expect(act).toThrow(
      'route "stripe": action "handleStripeEvnt" is not supplied; did you mean "handleStripeEvent"? (the actions supplied are: handleStripeEvent)',
    );
    expect(act).not.toThrow(/add it to actions/);
  });

  it('suggests the demo\'s payout for "paypout" while the demo is on', () => {
    const act = () => { assertActionsSupplied(resolveConfig({ ...config, routes: config.routes.map((r) => ({ ...r, action: 'paypout' })) }), ['payout']); };
    expect(act).toThrow('did you mean "payout"?');
  });

  it('still says how to add an action when no name is near', () => {
    const act = () => { assertActionsSupplied(resolveConfig({ ...config, routes: config.routes.map((r) => ({ ...r, action: 'refund' })) }), ['handleStripeEvent']); };
    expect(act).toThrow("(add it to actions: { refund: { entry: 'src/actions/refund.ts' } })");
  });

  it('stops npm start with the suggestion on one line', () => {
    const act = () => readLocalSettings({}, misspelt, '/work');
    expect(act).toThrow(SettingsError);
    expect(act).toThrow('retryproof.config.ts: route "stripe": action "handleStripeEvnt" is not supplied; did you mean "handleStripeEvent"?');
  });

  it('stops the CDK app (bin/app.ts\'s runRetryproofApp) with exit code 1 and the one line, no source line or stack above it', async () => {
    // Prepare: an app file like bin/app.ts over the misspelt configuration.
    const dir = await mkdtemp(join(tmpdir(), 'retryproof-misspelt-'));
    const app = join(dir, 'app.ts');
    await writeFile(
      app,
      [
        `import { runRetryproofApp } from ${JSON.stringify(join(REPO, 'lib/retryproof-app.ts'))};`,
        `import { config } from ${JSON.stringify(join(REPO, 'retryproof.config.ts'))};`,
        "runRetryproofApp({ ...config, routes: config.routes.map((r) => ({ ...r, action: 'handleStripeEvnt' })) });",
        '',
      ].join('\n'),
    );
    try {
      // Act
      const failure = await run('npx', ['node', app], { cwd: REPO }).then(
        () => undefined,
        (err: unknown) => err as { code: number; stderr: string },
      );
      // Assess
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toBe(
        'retryproof.config.ts: route "stripe": action "handleStripeEvnt" is not supplied; did you mean "handleStripeEvent"? (the actions supplied are: handleStripeEvent)\n',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
