/**
 * `retryproof order show` and `order skip` on a local stack: its endpoints.json (its pid ours, so
 * alive) over the run's DynamoDB Local and fauxqs, with a route ordered per customer whose line
 * the real executor built (entity-line-scene.ts). The CLI reads the line, skips a FAILED head and
 * wakes the next record onto the stack's queue, refuses any other head with exit code 1, and
 * answers a mistyped command line with exit code 2 and one line that says what was wrong.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EXIT } from '../../cli/errors.ts';
import { recordText } from '../../cli/commands/inspect.ts';
import { whereNow } from '../../cli/console/delivery-page.ts';
import { runCli } from '../../cli/main.ts';
import { inspectDelivery } from '../../cli/operations/inspect-delivery.ts';
import type { Target } from '../../cli/target.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import type { LocalEndpoints } from '../../local/endpoints-file.ts';
import { entityLineScene } from '../support/entity-line-scene.ts';
import type { LineScene } from '../support/entity-line-scene.ts';
import { waitFor } from '../support/executor-fixture.ts';

let scene: LineScene;
let dir: string;
const [A, B, C] = ['evt_a', 'evt_b', 'evt_c'];

beforeAll(async () => {
  // Prepare: cus_1's line, its head A FAILED, B and C parked behind it; the queue emptied.
  scene = await entityLineScene();
  scene.failing.add(A);
  const messages = [await scene.deliver(A, 'cus_1'), await scene.deliver(B, 'cus_1'), await scene.deliver(C, 'cus_1')];
  for (const message of messages) await scene.run(message);
  await scene.takeMessages();
  dir = await mkdtemp(join(tmpdir(), 'retryproof-order-'));
  const queues = { queueUrl: scene.queueUrl, dlqUrl: scene.dlqUrl, queueArn: 'arn:aws:sqs:local-1:000000000000:q', dlqArn: 'arn:aws:sqs:local-1:000000000000:dlq' };
  const endpoints: LocalEndpoints = {
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    configFile: '/x/retryproof.config.ts',
    httpUrl: 'http://127.0.0.1:1',
    region: 'us-east-1',
    dynamoEndpoint: inject('dynamoEndpoint'),
    sqsEndpoint: inject('sqsEndpoint'),
    eventsTable: scene.eventsTable,
    ...queues,
    regions: [{ name: 'local-1', httpUrl: 'http://127.0.0.1:1', adminUrl: 'http://127.0.0.1:1', ...queues }],
    routes: [],
    config: scene.config,
    settings: { visibilityTimeoutSeconds: 30, maxReceiveCount: 8, reconcileEverySeconds: 0, stuckAfterSeconds: 900, settleSeconds: 300 },
  };
  await writeFile(join(dir, 'endpoints.json'), JSON.stringify(endpoints));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['--local', ...argv], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stderrIsTty: false, env: { RETRYPROOF_LOCAL_DIR: dir } });
  return { code, stdout, stderr };
}

// In file order: the skip acts on the line the show reads first.
describe('retryproof order', () => {
  it('show prints the FAILED head, why it holds the line, and the two records parked behind it; --json the same as one document', async () => {
    // Act
    const json = await cli('order', 'show', scene.route, 'cus_1', '--json');
    const text = await cli('order', 'show', scene.route, 'cus_1', '--limit', '2');
    // Assess
    expect(json.code, json.stderr).toBe(EXIT.ok);
    const line = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(line).toMatchObject({
      route: scene.route,
      entity: 'cus_1',
      entityHash: scene.hashOf('cus_1'),
      next: 1,
      more: false,
      places: [
        { place: 1, key: A, status: 'FAILED', attempts: 1, waiting: false },
        { place: 2, key: B, status: 'PARKED', waiting: true },
        { place: 3, key: C, status: 'PARKED', waiting: true },
      ],
      head: { place: 1, key: A, status: 'FAILED', state: 'failed' },
    });
    expect(text.code, text.stderr).toBe(EXIT.ok);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toBe(`the line of cus_1 on route ${scene.route}: its turn is at place 1`);
    expect(lines[1]).toMatch(new RegExp(`^held by place 1, ${A}: FAILED after 1 attempt: fix the cause and redrive it`));
    expect(lines[2]).toBe(`  last error  PermanentActionError: downstream refused ${A}`);
    const rows = lines.map((l) => l.trim().split(/\s{2,}/));
    expect(rows).toContainEqual(['1', A, 'FAILED', '1', expect.stringMatching(/^\d{4}-/) as string]);
    expect(rows).toContainEqual(['2', B, 'PARKED', '0', 'parked', expect.stringMatching(/^\d{4}-/) as string]);
    expect(text.stdout).not.toContain(C);
    expect(text.stdout).toContain('... and more (--limit N lists up to 1000)');
  });

  it('inspect and the console\'s delivery screen say a record behind the head waits in its line, not that its route is paused', async () => {
    // Act
    const dynamo = localDynamoClient(inject('dynamoEndpoint'));
    const target = { kind: 'aws', description: 'the scene', dynamo, eventsTable: scene.eventsTable, ledgerTable: undefined, config: scene.config, routes: [scene.route] } as unknown as Target;
    const found = await inspectDelivery(target, scene.route, B, { now: Date.now() }).finally(() => {
      dynamo.destroy();
    });
    // Assess
    expect(found.record).toMatchObject({ status: 'PARKED', waitingTurn: 2 });
    expect(whereNow(found.record!, undefined, Date.now())).toMatch(/^waiting in its line: place 2 /);
    expect(recordText(found.record!, false)).toContain('waiting    in its line: place 2');
  });

  it('skip moves past the FAILED head and wakes the next record onto the stack\'s queue; skipping again is refused with exit code 1', async () => {
    // Act
    const skip = await cli('order', 'skip', scene.route, 'cus_1');
    // Assess: B's wake-up is on the queue and B is RECEIVED again; A stays FAILED.
    expect(skip.code, skip.stderr).toBe(EXIT.ok);
    expect(skip.stdout).toBe(
      `skipped place 1 of the line of cus_1 on route ${scene.route}: ${A} stays FAILED (1 attempt); redriven later, it runs at the end of its line\n` +
        `woke ${B}: its message is on the queue\n`,
    );
    const wakeUps = await waitFor('the wake-up of B on the stack\'s queue', async () => {
      const found = (await scene.takeMessages()).filter((m) => m.key === B);
      return found.length > 0 ? found : undefined;
    });
    expect(wakeUps).toHaveLength(1);
    expect((await scene.record(B))?.status).toBe('RECEIVED');
    expect((await scene.record(A))?.status).toBe('FAILED');
    const after = await cli('order', 'show', scene.route, 'cus_1');
    expect(after.stdout.split('\n')[1]).toBe(`held by place 2, ${B}: RECEIVED: its message is on the queue, no attempt yet`);
    const rows = after.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
    expect(rows).toContainEqual(['2', B, 'RECEIVED', '0', 'woken', expect.stringMatching(/^\d{4}-/) as string]);
    expect(rows).toContainEqual(['3', C, 'PARKED', '0', 'parked', expect.stringMatching(/^\d{4}-/) as string]);

    // Act 2: B is the head now, RECEIVED: not for skipping.
    const again = await cli('order', 'skip', scene.route, 'cus_1');
    const againJson = await cli('order', 'skip', scene.route, 'cus_1', '--json');
    // Assess 2
    expect(again.code).toBe(EXIT.failed);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(
      `retryproof order skip: route ${scene.route}, entity cus_1: the head of the line (place 2, key ${B}) is RECEIVED, not FAILED: only a failed head is skipped; ` +
        `retryproof order show ${scene.route} cus_1 says what it waits for\n`,
    );
    expect(againJson.code).toBe(EXIT.failed);
    expect(JSON.parse(againJson.stdout)).toEqual({ route: scene.route, entity: 'cus_1', outcome: 'refused', refused: expect.stringContaining('is RECEIVED, not FAILED') as string });
    expect((await scene.record(C))?.status).toBe('PARKED');
  });

  it.each([
    ['an unknown route', () => ['order', 'show', `${scene.route}x`, 'cus_1'], () => `retryproof order show: unknown route "${scene.route}x" (did you mean "${scene.route}"?); the routes of the local stack in ${dir}: ${scene.route}, ${scene.unordered}`],
    ['a route without orderBy', () => ['order', 'skip', scene.unordered, 'cus_1'], () => `retryproof order skip: route "${scene.unordered}" is not ordered per entity (it has no orderBy), so it has no lines; ordered routes: ${scene.route}`],
    ['an empty entity', () => ['order', 'skip', scene.route, ''], () => `retryproof order skip: the entity is empty: give the value whose line route "${scene.route}" keeps ({body:/customer}), such as a customer id`],
    ['a bad --limit', () => ['order', 'show', scene.route, 'cus_1', '--limit', '0'], () => 'retryproof order show: --limit must be a whole number from 1 to 1000, got "0"'],
    ['a missing entity', () => ['order', 'show', scene.route], () => `retryproof order show: order show takes <route> <entity>, got ${scene.route}`],
  ])('answers %s with exit code 2, one line that says so and the usage, no stack trace', async (_what, argv, firstLine) => {
    const out = await cli(...argv());
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe(firstLine());
    expect(out.stderr).toMatch(/\nusage: retryproof order (show|skip) <route> <entity>/);
    expect(out.stderr).not.toMatch(/\n\s+at /);
  });
});
