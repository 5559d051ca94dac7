import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The logical id prefix of the function behind the route secrets' custom resource. */
const SECRET_HANDLER_ID = 'SecretsEnsureHandler';

interface CfnTemplate {
  readonly Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

describe('npx cdk synth --quiet', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'retryproof-synth-'));
  let template: CfnTemplate;

  beforeAll(async () => {
    // Act: the real CLI on the real app, offline, as a user runs it (npx puts the
    // node@24 binary of node_modules/.bin first on PATH).
    await run('npx', ['cdk', 'synth', '--quiet', '-o', outdir], { cwd: REPO_ROOT, timeout: 150_000 });
    template = JSON.parse(readFileSync(join(outdir, 'Retryproof.template.json'), 'utf8')) as CfnTemplate;
  }, 160_000);

  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
  });

  it('runs on Node 24 from the repository', async () => {
    const { stdout } = await run('npx', ['node', '--version'], { cwd: REPO_ROOT });
    expect(stdout.trim()).toMatch(/^v24\./);
  });

  it('writes the Retryproof template with every kind of resource the design names', () => {
    const types = new Set(Object.values(template.Resources).map((r) => r.Type));
    for (const type of [
      'AWS::ApiGatewayV2::Api',
      'AWS::ApiGatewayV2::Route',
      'AWS::ApiGatewayV2::Stage',
      'AWS::DynamoDB::GlobalTable',
      'AWS::SQS::Queue',
      'AWS::Lambda::Function',
      'AWS::Lambda::EventSourceMapping',
      'AWS::Scheduler::Schedule',
      // Route secrets are ensured by name at deploy (lib/stateful/route-secrets.ts), not owned by the stack.
      'Custom::RetryproofRouteSecret',
      'AWS::SNS::Topic',
      'AWS::IAM::Policy',
    ]) {
      expect(types).toContain(type);
    }
  });

  it('bundles each function locally into an ESM file with its source map and a require shim', () => {
    // The three of retryproof, and the deploy-time one behind the route secrets, bundled alike.
    const functions = Object.entries(template.Resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .map(([, r]) => r);
    expect(functions).toHaveLength(4);
    expect(Object.keys(template.Resources).filter((id) => id.startsWith(SECRET_HANDLER_ID) && template.Resources[id]?.Type === 'AWS::Lambda::Function')).toHaveLength(1);
    for (const fn of functions) {
      const key = (fn.Properties.Code as { S3Key: string }).S3Key;
      const asset = join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
      expect(existsSync(join(asset, 'index.mjs.map'))).toBe(true);
      const code = readFileSync(join(asset, 'index.mjs'), 'utf8');
      expect(code.startsWith("import { createRequire } from 'module'; const require = createRequire(import.meta.url);")).toBe(true);
    }
  });

  it('keeps the S3 SDK out of each bundle that reads bodies, in a file beside it that the bundle imports by name', async () => {
    const byId = (prefix: string) => Object.entries(template.Resources).find(([id, r]) => id.startsWith(prefix) && r.Type === 'AWS::Lambda::Function')?.[1];
    for (const id of ['Ingest', 'Executor', 'Reconciler']) {
      const key = (byId(id)?.Properties.Code as { S3Key: string }).S3Key;
      const asset = join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
      const code = readFileSync(join(asset, 'index.mjs'), 'utf8');
      // The S3 client's service id is in the side file only.
      expect(code).not.toContain('AmazonS3');
      expect(code).toContain('"./s3-sdk.mjs"');
      const side = (await import(pathToFileURL(join(asset, 's3-sdk.mjs')).href)) as Record<string, unknown>;
      expect(Object.keys(side).sort()).toEqual(['CopyObjectCommand', 'GetObjectCommand', 'HeadObjectCommand', 'PutObjectCommand', 'S3Client']);
    }
    const secrets = (byId(SECRET_HANDLER_ID)?.Properties.Code as { S3Key: string }).S3Key;
    expect(existsSync(join(outdir, `asset.${secrets.replace(/\.zip$/, '')}`, 's3-sdk.mjs'))).toBe(false);
  });
});
