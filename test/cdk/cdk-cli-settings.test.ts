/**
 * The CDK CLI stays on loopback for this project: cdk.json turns off its notices (fetched
 * from the internet on every command) and its telemetry (sent by a background process).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('cdk.json', () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'retryproof-cdk-home-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('turns off the CDK notices and the CLI telemetry', async () => {
    const settings = JSON.parse(await readFile(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { notices?: unknown; context?: Record<string, unknown> };
    expect(settings.notices).toBe(false);
    expect(settings.context?.['cli-telemetry']).toBe(false);
  });

  it('is enough for the CLI itself to report telemetry disabled, with no user setting and no variable', async () => {
    // Prepare: an empty home (no ~/.cdk.json) and no CDK_DISABLE_CLI_TELEMETRY, so only cdk.json can disable it.
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
    delete env.CDK_DISABLE_CLI_TELEMETRY;
    // Act: the project's own CLI on this test's Node 24.
    const { stdout, stderr } = await run(process.execPath, [join(REPO_ROOT, 'node_modules/aws-cdk/bin/cdk'), 'cli-telemetry', '--status'], {
      cwd: REPO_ROOT,
      env,
      timeout: 60_000,
    });
    // Assess
    expect(`${stdout}${stderr}`).toMatch(/CLI Telemetry is disabled/);
  }, 70_000);
});
