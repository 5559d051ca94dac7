/**
 * A stub of Lambda's Invoke API on 127.0.0.1. There is no local Lambda service to invoke a
 * deployed function on, so this is the stand-in: it speaks the REST call the SDK makes
 * (`POST /2015-03-31/functions/<name>/invocations`, the event as the body) and answers as Lambda
 * does (Lambda API Reference, Invoke): 200 with the function's return value; 200 with
 * `X-Amz-Function-Error: Unhandled` and the error object when the function threw; and a service
 * error with its code in `x-amzn-ErrorType` (restJson1) when Lambda refuses the call.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LambdaClient } from '@aws-sdk/client-lambda';

/** What the stub's function does with one invocation: return a value, or throw. */
export type StubFunction = (functionName: string, event: unknown) => Promise<unknown>;

/** A refusal by Lambda itself, before any function runs. */
export class LambdaRefusal extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'LambdaRefusal';
    this.status = status;
    this.code = code;
  }
}

export interface LambdaInvokeStub {
  readonly endpoint: string;
  /** Each invocation: the function's name and its event, in order. */
  readonly invocations: { functionName: string; event: unknown }[];
  /** A LambdaClient on the stub, with made-up credentials. */
  client(): LambdaClient;
  close(): Promise<void>;
}

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

/** Starts the stub; `run` is every function's code. */
export async function startLambdaInvokeStub(run: StubFunction): Promise<LambdaInvokeStub> {
  const invocations: { functionName: string; event: unknown }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = (status: number, headers: Record<string, string>, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      const path = INVOKE_PATH.exec(new URL(req.url ?? '/', 'http://stub').pathname);
      if (req.method !== 'POST' || path === null) {
        answer(404, { 'x-amzn-ErrorType': 'UnknownOperationException' }, { message: `the stub answers Invoke only, not ${req.method} ${req.url}` });
        return;
      }
      const functionName = decodeURIComponent(path[1] ?? '');
      const text = Buffer.concat(chunks).toString('utf8');
      const event: unknown = text === '' ? {} : JSON.parse(text);
      invocations.push({ functionName, event });
      run(functionName, event).then(
        (value) => {
          answer(200, { 'x-amz-executed-version': '$LATEST' }, value);
        },
        (err: unknown) => {
          if (err instanceof LambdaRefusal) {
            answer(err.status, { 'x-amzn-ErrorType': err.code }, { Type: 'User', message: err.message });
            return;
          }
          const error = err instanceof Error ? err : new Error(String(err));
          answer(200, { 'x-amz-executed-version': '$LATEST', 'x-amz-function-error': 'Unhandled' }, { errorType: error.name, errorMessage: error.message, trace: [] });
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    invocations,
    client: () => new LambdaClient({ region: 'eu-west-1', endpoint, credentials: { accessKeyId: 'stub', secretAccessKey: 'stub' }, maxAttempts: 1 }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => {
          if (err === undefined) resolve();
          else reject(err);
        });
      }),
  };
}
