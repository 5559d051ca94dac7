/**
 * The CLI on a local stack whose route `slow` has a queue of its own: endpoints.json names it
 * (routeQueueUrls), `dlq redrive` puts each dead letter back on its route's queue (slow's own,
 * fast's the shared one), `routes list` shows each queue's depth, and `receivers --local` lists
 * the route queue. The stack is stood in for by its endpoints.json (its pid ours, so alive) over
 * the run's DynamoDB Local and fauxqs, with queues of this test's own names.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EXIT } from '../../cli/errors.ts';
import { runCli } from '../../cli/main.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { createQueuePair, ensureRouteQueue, localSqsClient } from '../../local/aws-clients.ts';
import type { LocalEndpoints } from '../../local/endpoints-file.ts';
import { localRouteQueueName } from '../../local/route-queues.ts';

const run = randomUUID().slice(0, 8);
const FAST = `fast-${run}`;
const SLOW = `slow-${run}`;
const stem = `cli-rq-${run}`;
const endpoint = inject('sqsEndpoint');
const sqs = localSqsClient(endpoint);

let dir: string;
let shared: { queueUrl: string; dlqUrl: string; queueArn: string; dlqArn: string };
let slowQueue: { queueUrl: string; queueArn: string };

const arnOf = async (url: string): Promise<string> =>
  (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';

beforeAll(async () => {
  const pair = await createQueuePair(sqs, endpoint, stem, { maxReceiveCount: 5, visibilityTimeoutSeconds: 30 });
  shared = { ...pair, queueArn: await arnOf(pair.queueUrl), dlqArn: await arnOf(pair.dlqUrl) };
  slowQueue = await ensureRouteQueue(sqs, endpoint, localRouteQueueName(stem, SLOW), { dlqArn: shared.dlqArn, maxReceiveCount: 5, visibilityTimeoutSeconds: 30 });
  const config = resolveConfig({
    routes: [
      { name: FAST, signature: { scheme: 'standard-webhooks' }, secretName: 'fast', action: 'a', actionTimeSeconds: 5 },
      { name: SLOW, signature: { scheme: 'standard-webhooks' }, secretName: 'slow', action: 'a', actionTimeSeconds: 5, rateLimit: { perSecond: 1 }, concurrency: 4 },
    ],
  });
  dir = await mkdtemp(join(tmpdir(), 'retryproof-route-queues-'));
  const routeQueueUrls = { [SLOW]: slowQueue.queueUrl };
  const endpoints: LocalEndpoints = {
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    configFile: '/x/retryproof.config.ts',
    httpUrl: 'http://127.0.0.1:1',
    region: 'us-east-1',
    dynamoEndpoint: inject('dynamoEndpoint'),
    sqsEndpoint: endpoint,
    eventsTable: inject('eventsTable'),
    ...shared,
    routeQueueUrls,
    regions: [{ name: 'local-1', httpUrl: 'http://127.0.0.1:1', adminUrl: 'http://127.0.0.1:1', ...shared, routeQueueUrls }],
    routes: [],
    config,
    settings: { visibilityTimeoutSeconds: 30, maxReceiveCount: 5, reconcileEverySeconds: 0, stuckAfterSeconds: 900, settleSeconds: 300 },
  };
  await writeFile(join(dir, 'endpoints.json'), JSON.stringify(endpoints));
});

afterAll(async () => {
  sqs.destroy();
  await rm(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['--local', ...argv], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stderrIsTty: false, env: { RETRYPROOF_LOCAL_DIR: dir } });
  return { code, stdout, stderr };
}

const deadLetter = (route: string, key: string): string =>
  JSON.stringify({ v: 1, route, key, fingerprint: 'f'.repeat(64), receivedAt: Date.now(), body: '{}', bodyEncoding: 'utf8', headers: {}, reason: 'permanent error' });

/** Takes every message off a queue of this test, and returns their keys. */
async function drained(queueUrl: string): Promise<string[]> {
  const keys: string[] = [];
  for (let empty = 0; empty < 3; ) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30 }));
    const got = out.Messages ?? [];
    empty = got.length === 0 ? empty + 1 : 0;
    keys.push(...got.map((m) => (JSON.parse(m.Body ?? '{}') as { key: string }).key));
    if (got.length > 0) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: got.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })) }));
  }
  return keys.sort();
}

describe('the CLI on a local stack with a route on its own queue', () => {
  it('receivers --local lists the route\'s own queue', async () => {
    const out = await cli('receivers', '--json');
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(JSON.parse(out.stdout)).toEqual([expect.objectContaining({ queueUrl: shared.queueUrl, routeQueueUrls: { [SLOW]: slowQueue.queueUrl } })]);
  });

  it('routes list shows each route\'s queue and every queue\'s depth: the shared one, the route\'s own, the DLQ', async () => {
    // Prepare: two waiting on slow's queue, one delayed there, one on the shared queue.
    await sqs.send(new SendMessageCommand({ QueueUrl: slowQueue.queueUrl, MessageBody: deadLetter(SLOW, 'w-1') }));
    await sqs.send(new SendMessageCommand({ QueueUrl: slowQueue.queueUrl, MessageBody: deadLetter(SLOW, 'w-2') }));
    await sqs.send(new SendMessageCommand({ QueueUrl: slowQueue.queueUrl, MessageBody: deadLetter(SLOW, 'w-3'), DelaySeconds: 900 }));
    await sqs.send(new SendMessageCommand({ QueueUrl: shared.queueUrl, MessageBody: deadLetter(FAST, 'w-4') }));
    // Act
    const json = await cli('routes', 'list', '--json');
    const text = await cli('routes', 'list');
    // Assess
    expect(json.code, json.stderr).toBe(EXIT.ok);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ route: FAST, state: 'active', queue: { queue: stem, kind: 'shared', visible: 1, inFlight: 0, delayed: 0 } }),
      expect.objectContaining({ route: SLOW, state: 'active', queue: { queue: `${stem}-${SLOW}`, kind: 'route', visible: 2, inFlight: 0, delayed: 1 } }),
    ]);
    const rows = text.stdout.split('\n').map((line) => line.trim().split(/\s{2,}/));
    expect(rows).toContainEqual([stem, '1', '0', '0', FAST]);
    expect(rows).toContainEqual([`${stem}-${SLOW}`, '2', '0', '1', `${SLOW} (own queue)`]);
    expect(rows).toContainEqual([`${stem}-dlq`, '0', '0', '0', 'dead letters (DLQ)']);
    await drained(slowQueue.queueUrl);
    await drained(shared.queueUrl);
  });

  it('dlq redrive puts each dead letter back on its route\'s queue: slow\'s own, fast\'s the shared one', async () => {
    // Prepare
    for (const [route, key] of [[SLOW, 's-1'], [SLOW, 's-2'], [FAST, 'f-1']] as const) {
      await sqs.send(new SendMessageCommand({ QueueUrl: shared.dlqUrl, MessageBody: deadLetter(route, key) }));
    }
    // Act
    const out = await cli('dlq', 'redrive', '--json');
    // Assess
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(JSON.parse(out.stdout)).toEqual({ mode: 'receive-send-delete', moved: 3, byQueue: { [stem]: 1, [`${stem}-${SLOW}`]: 2 }, unrunnable: [] });
    expect(await drained(slowQueue.queueUrl)).toEqual(['s-1', 's-2']);
    expect(await drained(shared.queueUrl)).toEqual(['f-1']);
  });

  it('dlq redrive says how many went to each queue', async () => {
    await sqs.send(new SendMessageCommand({ QueueUrl: shared.dlqUrl, MessageBody: deadLetter(SLOW, 's-3') }));
    const out = await cli('dlq', 'redrive');
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(out.stdout).toBe(`moved 1 message from the DLQ to the work queues (1 to ${stem}-${SLOW})\n`);
    expect(await drained(slowQueue.queueUrl)).toEqual(['s-3']);
  });
});
