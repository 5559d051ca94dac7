/**
 * The multi-region example through the real CDK CLI, offline, as a user runs it: one template
 * per replica Region, each function bundled by the local esbuild, the manifest ordering the
 * table owner's stack first.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface CfnTemplate {
  readonly Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

interface Manifest {
  readonly artifacts: Record<string, { type: string; environment?: string; dependencies?: string[] }>;
}

describe("npx cdk synth of examples/multi-region", () => {
  const outdir = mkdtempSync(join(tmpdir(), 'retryproof-multi-region-synth-'));
  const templateOf = (stack: string): CfnTemplate => JSON.parse(readFileSync(join(outdir, `${stack}.template.json`), 'utf8')) as CfnTemplate;

  beforeAll(async () => {
    // Act: the CLI from the repository root, the example's app, no credentials, no network.
    await run('npx', ['cdk', 'synth', '--quiet', '--app', 'node --import ./examples/self-reference.ts examples/multi-region/app.ts', '-c', 'ordersApiUrl=https://orders.example.test', '-o', outdir], {
      cwd: REPO_ROOT,
      timeout: 150_000,
    });
  }, 160_000);

  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
  });

  it('writes one template per replica Region, the us-east-2 stack depending on the us-east-1 one', () => {
    const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as Manifest;
    const stacks = Object.entries(manifest.artifacts).filter(([, a]) => a.type === 'aws:cloudformation:stack');
    expect(stacks.map(([name, a]) => [name, a.environment?.split('/').at(-1)])).toEqual([
      ['Retryproof-us-east-1', 'us-east-1'],
      ['Retryproof-us-east-2', 'us-east-2'],
    ]);
    expect(manifest.artifacts['Retryproof-us-east-2']?.dependencies).toContain('Retryproof-us-east-1');
  });

  it('puts the one MRSC global table in the us-east-1 template only', () => {
    const tables = (stack: string) => Object.values(templateOf(stack).Resources).filter((r) => r.Type === 'AWS::DynamoDB::GlobalTable');
    expect(tables('Retryproof-us-east-1').map((t) => t.Properties.MultiRegionConsistency)).toEqual(['STRONG']);
    expect(tables('Retryproof-us-east-2')).toEqual([]);
  });

  it.each(['Retryproof-us-east-1', 'Retryproof-us-east-2'])('bundles the three functions of %s locally, the example action in the executor', (stack) => {
    // Retryproof's three; us-east-1 also holds the deploy-time function behind the route secret.
    const functions = Object.entries(templateOf(stack).Resources)
      .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && !id.startsWith('SecretsEnsureHandler'))
      .map(([, r]) => r);
    expect(functions).toHaveLength(3);
    const bundles = functions.map((fn) => {
      const asset = join(outdir, `asset.${(fn.Properties.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '')}`);
      expect(existsSync(join(asset, 'index.mjs.map'))).toBe(true);
      return readFileSync(join(asset, 'index.mjs'), 'utf8');
    });
    expect(bundles.filter((code) => code.includes('the orders API refused the order'))).toHaveLength(1);
  });
});
