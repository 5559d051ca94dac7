/** DynamoDB Local (a JVM) and fauxqs (a Node process of its own) for one benchmark run. */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startLocalDynamo } from '../local/local-aws.ts';

export interface BenchServices {
  readonly dynamo: string;
  readonly sqs: string;
  stop(): Promise<void>;
}

async function startSqsProcess(): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [new URL('./sqs-process.ts', import.meta.url).pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const endpoint = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error('fauxqs did not start within 30 s'));
    }, 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fauxqs exited with code ${String(code)} before it started`));
    });
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { endpoint: string }).endpoint);
    });
  });
  return {
    endpoint,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => {
          resolve();
        });
        child.stdin.end();
      }),
  };
}

export async function startBenchServices(): Promise<BenchServices> {
  const [dynamo, sqs] = await Promise.all([startLocalDynamo(), startSqsProcess()]);
  return {
    dynamo: dynamo.endpoint,
    sqs: sqs.endpoint,
    stop: async () => {
      await Promise.all([dynamo.stop(), sqs.stop()]);
    },
  };
}
