/**
 * The local Target takes its configuration from endpoints.json, which the running stack
 * writes; a file from a stack older than that has none, and the CLI says to restart it rather
 * than fall back on a configuration file that may not be what runs.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/errors.ts';
import { runCli } from '../../cli/main.ts';

describe('--local on an endpoints.json without the configuration the stack runs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-old-stack-'));
    // What a stack of the previous version wrote: everything but `config`; its pid (ours) is alive.
    await writeFile(
      join(dir, 'endpoints.json'),
      JSON.stringify({
        version: 1,
        pid: process.pid,
        startedAt: new Date().toISOString(),
        configFile: '/x/retryproof.config.ts',
        httpUrl: 'http://127.0.0.1:1',
        region: 'us-east-1',
        dynamoEndpoint: 'http://127.0.0.1:1',
        sqsEndpoint: 'http://127.0.0.1:1',
        eventsTable: 'retryproof-events',
        queueUrl: 'http://127.0.0.1:1/000000000000/q',
        dlqUrl: 'http://127.0.0.1:1/000000000000/q-dlq',
        queueArn: 'arn:aws:sqs:us-east-1:000000000000:q',
        dlqArn: 'arn:aws:sqs:us-east-1:000000000000:q-dlq',
        routes: [{ name: 'demo' }],
        settings: { visibilityTimeoutSeconds: 2, maxReceiveCount: 12, reconcileEverySeconds: 0, stuckAfterSeconds: 900, settleSeconds: 300 },
      }),
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('says to restart the local stack, exit code 1, for every command that needs the configuration', async () => {
    for (const argv of [['routes', 'list'], ['reconcile'], ['inspect', 'demo', 'k']]) {
      let stderr = '';
      const code = await runCli(['--local', ...argv], { stdout: () => undefined, stderr: (t) => (stderr += t), stderrIsTty: false, env: { RETRYPROOF_LOCAL_DIR: dir } });
      expect(code).toBe(EXIT.failed);
      expect(stderr).toBe(
        `retryproof ${argv.slice(0, argv[0] === 'inspect' || argv[0] === 'reconcile' ? 1 : 2).join(' ')}: the local stack in ${dir} (pid ${process.pid}) is older than this CLI: ` +
          'its endpoints.json does not say which configuration it runs; restart the local stack (Ctrl-C, then npm start)\n',
      );
    }
  });
});
