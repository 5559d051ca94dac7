/**
 * Every signature scheme, tried locally as the README's senders table says: `npm start`
 * serves one demo route per scheme, its banner prints each route's local secret, and
 * `npm run send -- --route demo-<scheme>` signs as that sender would.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveTarget } from '../../cli/target.ts';
import { inspectDelivery } from '../../cli/operations/inspect-delivery.ts';
import { DEMO_ROUTE, LOCAL_SCHEME_DEMO_ROUTES } from '../../local/local-settings.ts';
import { runScript, shutDown, stackEnv, startStack } from './stack-process.ts';
import type { StackProcess } from './stack-process.ts';

describe('the local stack’s demo route of each scheme', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let stack: StackProcess | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-schemes-'));
    env = await stackEnv(dir);
    stack = await startStack(env);
  }, 120_000);

  afterAll(async () => {
    await shutDown(stack, dir);
    await rm(dir, { recursive: true, force: true });
  }, 90_000);

  it('prints each route’s local secret in the banner, and for v1a the signing key beside the public key', () => {
    const lines = stack!.lines;
    // The demo route's secret is on the ready line ("(demo secret ...)"); every other route has a line of its own.
    for (const route of LOCAL_SCHEME_DEMO_ROUTES.filter((r) => r.name !== DEMO_ROUTE)) {
      expect(lines.some((l) => l.startsWith(`route ${route.name} (${route.signature.scheme},`)), route.name).toBe(true);
    }
    expect(lines.some((l) => / \(demo secret whsec_\S+\)/.test(l))).toBe(true);
    expect(lines.find((l) => l.startsWith('route demo-v1a '))).toMatch(/local signing key whsk_\S+ \(the receiver holds whpk_\S+\)/);
  });

  it('lists every demo route in `retryproof --local routes list`', async () => {
    const listed = await runScript('cli/retryproof.ts', ['--local', 'routes', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const routes = (JSON.parse(listed.stdout) as { route: string }[]).map((r) => r.route);
    expect(routes).toEqual(expect.arrayContaining(LOCAL_SCHEME_DEMO_ROUTES.map((r) => r.name)));
  }, 60_000);

  it.each(LOCAL_SCHEME_DEMO_ROUTES.map((r) => r.name))('accepts `npm run send -- --route %s --dup 1` as one delivery and one replay, and runs it once', async (route) => {
    // Act
    const sent = await runScript('scripts/send.ts', ['--route', route, '--dup', '1', '--json'], env);
    // Assess
    expect(sent.code, sent.stderr).toBe(0);
    const out = JSON.parse(sent.stdout) as { key: string; answers: { status: number; replayed: boolean }[] };
    expect(out.answers.map((a) => [a.status, a.replayed])).toEqual([
      [202, false],
      [202, true],
    ]);
    const target = await resolveTarget({ local: true }, env);
    try {
      const deadline = Date.now() + 30_000;
      let status: string | undefined;
      while (Date.now() < deadline) {
        status = (await inspectDelivery(target, route, out.key)).record?.status;
        if (status === 'COMPLETED') break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(status).toBe('COMPLETED');
    } finally {
      target.close();
    }
  }, 60_000);
});
