import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

/** Builds an HTTP API (payload format 2.0) event for `POST /webhooks/{route}`, as API Gateway does. */
export function httpApiEvent(options: {
  route: string;
  body: Buffer | string;
  headers?: Record<string, string>;
  method?: string;
  base64?: boolean;
}): APIGatewayProxyEventV2 {
  const raw = typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : options.body;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  const method = options.method ?? 'POST';
  const path = `/webhooks/${options.route}`;
  return {
    version: '2.0',
    routeKey: 'POST /webhooks/{route}',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...headers },
    pathParameters: { route: options.route },
    isBase64Encoded: options.base64 === true,
    body: options.base64 === true ? raw.toString('base64') : raw.toString('utf8'),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: randomUUID(),
      routeKey: 'POST /webhooks/{route}',
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
  };
}

/** A Lambda context for handlers invoked in-process. */
export function lambdaContext(functionName = 'retryproof-local'): Context {
  // The deprecated callback-style members (done, fail, succeed) are left out on purpose.
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 30_000,
  } as Context;
}
