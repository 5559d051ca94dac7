/**
 * The isolation benchmark's receiver: the local stack itself (local/stack.ts, as `npm start`
 * runs it: DynamoDB Local, fauxqs, the gateway, the executor's event sources), started in this
 * process on a folder of its own, with two routes: `slow` (its action takes as long as the
 * benchmark says, rate-limited, on its own queue or on the shared one) and `fast` (no limit).
 * Deliveries go over HTTP, signed as a Standard Webhooks sender signs them.
 */
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { freePort } from '../../local/free-port.ts';
import { LOCAL_ENV, readLocalSettings } from '../../local/local-settings.ts';
import { signSample, webhookUrl } from '../../local/sample-delivery.ts';
import { startLocalStack } from '../../local/stack.ts';
import type { LocalStack } from '../../local/stack.ts';

export const SLOW = 'slow';
export const FAST = 'fast';

export interface IsolationStackOptions {
  /** The stack's folder (its data, its endpoints.json). */
  readonly dir: string;
  /** `slow` on a queue of its own at this concurrency; undefined: on the shared queue (ownQueue: false). */
  readonly slowConcurrency: number | undefined;
  readonly ratePerSecond: number;
  readonly slowActionSeconds: number;
  /** A line about a problem the stack reports (an event source error, say). */
  readonly onProblem: (line: string) => void;
}

export interface IsolationStack {
  readonly stack: LocalStack;
  /** Sends one signed delivery of a new key; resolves with the key and when the 202 came. */
  send(route: string): Promise<{ key: string; acceptedAt: number }>;
  /** Messages in the DLQ: visible, in flight and delayed. */
  dlqDepth(): Promise<number>;
  /** Stops the stack: `drain` waits for running actions, `abandon` does not. */
  stop(mode: 'drain' | 'abandon'): Promise<void>;
}

/** The benchmark's configuration: `slow` and `fast`, no demo. */
export function isolationConfig(options: Pick<IsolationStackOptions, 'slowConcurrency' | 'ratePerSecond' | 'slowActionSeconds'>): RetryproofConfig {
  const here = import.meta.dirname;
  return {
    routes: [
      {
        name: SLOW,
        signature: { scheme: 'standard-webhooks' },
        secretName: 'bench/slow',
        action: 'slowAction',
        // Room for the action's time and the lease's margins, as a team would declare it.
        actionTimeSeconds: Math.ceil(options.slowActionSeconds) + 5,
        rateLimit: { perSecond: options.ratePerSecond },
        ...(options.slowConcurrency === undefined ? { ownQueue: false } : { concurrency: options.slowConcurrency }),
      },
      { name: FAST, signature: { scheme: 'standard-webhooks' }, secretName: 'bench/fast', action: 'fastAction', actionTimeSeconds: 5 },
    ],
    actions: {
      slowAction: { entry: `${here}/slow-action.ts` },
      fastAction: { entry: `${here}/fast-action.ts` },
    },
    demo: false,
  };
}

/** Starts the local stack for one scenario. */
export async function startIsolationStack(options: IsolationStackOptions): Promise<IsolationStack> {
  const base = isolationConfig(options);
  // As deployed, the visibility timeout is 6x the executor's timeout (lib/stateful/work-queue.ts):
  // the local default of 5 s would hand a 20 s run's message back to the queue while it runs.
  const visibility = Math.min(43_200, 6 * resolveConfig(base).executorTimeoutSeconds);
  const env: NodeJS.ProcessEnv = {
    [LOCAL_ENV.port]: String(await freePort()),
    [LOCAL_ENV.dir]: options.dir,
    [LOCAL_ENV.reconcileEvery]: '0',
    [LOCAL_ENV.visibilityTimeout]: String(visibility),
  };
  const settings = readLocalSettings(env, base, process.cwd(), 'bench/isolation.ts');
  // After an abandon, the actions still running end on clients that are gone: their failures
  // are what an abandon means (their leases run out, nothing is lost), so they are not shown.
  let abandoned = false;
  const stack = await startLocalStack({
    settings,
    // One line per delivery and per run: hundreds a phase. Problems are shown.
    out: () => undefined,
    err: (line) => {
      if (!abandoned) options.onProblem(line);
    },
  });
  const sqs: SQSClient = localSqsClient(stack.endpoints.sqsEndpoint);
  const routes = new Map(settings.config.routes.map((r) => [r.name, r]));
  const secrets = new Map(settings.secrets.map((s) => [s.route, s.signingSecret]));
  return {
    stack,
    async send(routeName) {
      const route = routes.get(routeName);
      const secret = secrets.get(routeName);
      if (route === undefined || secret === undefined) throw new Error(`the benchmark has no route ${routeName}`);
      const key = `msg_${randomUUID()}`;
      const signed = signSample(route, secret, key, JSON.stringify({ n: key }), Math.floor(Date.now() / 1000));
      const answer = await fetch(webhookUrl(stack.url, routeName), { method: 'POST', headers: signed.headers, body: signed.body });
      const acceptedAt = Date.now();
      const text = await answer.text();
      if (answer.status !== 202) throw new Error(`${routeName}/${key} was answered ${answer.status}: ${text.slice(0, 200)}`);
      return { key, acceptedAt };
    },
    async dlqDepth() {
      const out = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: stack.endpoints.dlqUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      const a = out.Attributes ?? {};
      return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
    },
    async stop(mode) {
      sqs.destroy();
      if (mode === 'drain') {
        await stack.stop();
        return;
      }
      abandoned = true;
      await stack.abandon();
    },
  };
}
