/**
 * What a deployed receiver writes to CloudWatch Logs per delivery, measured: the real ingest,
 * executor and reconciler handlers, run locally on DynamoDB Local and fauxqs under the
 * environment lib/ gives the functions (retryproof-function.ts: POWERTOOLS_SERVICE_NAME,
 * POWERTOOLS_METRICS_NAMESPACE, no POWERTOOLS_LOG_LEVEL, so Powertools' default INFO), with
 * every byte they write to stdout and stderr captured and sorted by line kind: Powertools
 * Logger JSON, EMF, anything else. The lines Lambda and API Gateway write themselves cannot be
 * produced locally; they are modelled from AWS's documented formats (PLATFORM_LINES, accessLogLine).
 *
 *   npx node bench/log-bytes.ts            # measure and print
 *   npx node bench/log-bytes.ts --write    # measure and write bench/log-bytes.json (the cost model reads it)
 *
 * test/bench/log-bytes.test.ts measures again and checks the committed figures are current.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { Context } from 'aws-lambda';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { signDelivery } from '../lambdas/domain/signatures/sign-delivery.ts';
import { resolveConfig } from '../lambdas/config/resolve-config.ts';
import { ENV } from '../lambdas/config/env.ts';
import { wireIngest } from '../lambdas/ingest/wire-ingest.ts';
import { wireExecutor } from '../lambdas/executor/wire-executor.ts';
import { actionRegistryOf } from '../lambdas/actions/action-modules.ts';
import { SERVICE, METRICS_NAMESPACE } from '../lambdas/observability/metric-catalogue.ts';
import { createEventsTable, createQueuePair, localDynamoClient, localSqsClient } from '../local/aws-clients.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startLocalDynamo, startLocalSqs } from '../local/local-aws.ts';
import { httpApiEvent, lambdaContext } from '../local/http-api-event.ts';
import { StaticSecretSource } from '../local/static-secret-source.ts';
import { pollOnce } from '../local/sqs-event-source.ts';
import type { SqsHandler } from '../local/sqs-event-source.ts';
import { config as shippedConfig } from '../retryproof.config.ts';
import { ACCESS_LOG_FIELDS } from '../lib/stateless/webhook-api.ts';
import { shippedConfigJson } from '../lib/stateless/shipped-config.ts';
import { Template } from 'aws-cdk-lib/assertions';
import { createRetryproofApp } from '../lib/retryproof-app.ts';
import { payloadOf } from './deliveries.ts';
import { LOG_FIGURE_FILES } from './log-figures.ts';
import type { KindFigures, LineKind, LogBytesMeasurement, ModelledLine, StackInventory } from './log-figures.ts';

/** Where the committed figures live; bench/cost-model.ts reads them. */
export const LOG_BYTES_FILE = LOG_FIGURE_FILES.current;

/**
 * Synthesizes the app as `cdk synth` does for retryproof.config.ts (cdk.json's context; no
 * bundling, which changes no resource) and counts what is priced by the month.
 */
export function stackInventory(): StackInventory {
  const context = (JSON.parse(readFileSync(new URL('../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }).context;
  const built = createRetryproofApp(shippedConfig, { context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  const resources = Object.values((Template.fromStack(built.stack).toJSON() as { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> }).Resources);
  const of = (type: string) => resources.filter((r) => r.Type === type);
  const alarms = of('AWS::CloudWatch::Alarm');
  const alarmMetrics = alarms.reduce((sum, a) => {
    const metrics = a.Properties?.Metrics as { MetricStat?: unknown }[] | undefined;
    return sum + (metrics === undefined ? 1 : metrics.filter((m) => m.MetricStat !== undefined).length);
  }, 0);
  return {
    alarms: alarms.length,
    alarmMetrics,
    dashboards: of('AWS::CloudWatch::Dashboard').length,
    kmsKeys: of('AWS::KMS::Key').length,
    secrets: of('Custom::RetryproofRouteSecret').length + of('AWS::SecretsManager::Secret').length,
    schedules: of('AWS::Scheduler::Schedule').length,
    tracedFunctions: of('AWS::Lambda::Function').filter((f) => (f.Properties?.TracingConfig as { Mode?: string } | undefined)?.Mode === 'Active').length,
    logGroups: of('AWS::Logs::LogGroup').length,
    logRetentionDays: [...new Set(of('AWS::Logs::LogGroup').map((g) => Number(g.Properties?.RetentionInDays)))],
    routes: resolveConfig(shippedConfig).routes.length,
  };
}

// ---------------------------------------------------------------------------------------------
// Platform lines. Lambda writes these itself into the function's log group; in the default
// (Text) log format they are plain text. The format is the one in the Lambda Developer Guide,
// "Log and monitor Node.js Lambda functions" (https://docs.aws.amazon.com/lambda/latest/dg/nodejs-logging.html),
// whose example shows START, END and a REPORT followed by the XRAY part when active tracing is
// on (looked up 2026-12-03). Values are typical of these functions: 512 MB, a two-digit duration,
// a UUID request id; no Init Duration (a cold start's extra ~25 bytes, on few invocations).

const SAMPLE_REQUEST_ID = '8f507cfc-xmpl-4697-b07a-ac58fc914c95';
const LAMBDA_LOGGING_DOC = 'Lambda Developer Guide, "Log and monitor Node.js Lambda functions", https://docs.aws.amazon.com/lambda/latest/dg/nodejs-logging.html (2026-12-03)';

function modelled(sample: string, source: string): ModelledLine {
  return { sample, bytes: Buffer.byteLength(`${sample}\n`, 'utf8'), source };
}

export const PLATFORM_LINES = {
  start: modelled(`START RequestId: ${SAMPLE_REQUEST_ID} Version: $LATEST`, LAMBDA_LOGGING_DOC),
  end: modelled(`END RequestId: ${SAMPLE_REQUEST_ID}`, LAMBDA_LOGGING_DOC),
  report: modelled(
    `REPORT RequestId: ${SAMPLE_REQUEST_ID}\tDuration: 23.74 ms\tBilled Duration: 24 ms\tMemory Size: 512 MB\tMax Memory Used: 98 MB\t`,
    LAMBDA_LOGGING_DOC,
  ),
  // With `tracing: true` (Tracing.ACTIVE, retryproof-function.ts) the REPORT event carries the trace's ids.
  xray: modelled('XRAY TraceId: 1-5e34a614-10bdxmplf1fb44f07bc535a1\tSegmentId: 07f5xmpl2d1f6f85\tSampled: true\t', LAMBDA_LOGGING_DOC),
} as const;

/**
 * The access log line: lib/stateless/webhook-api.ts's JSON of HTTP API context variables,
 * filled with typical values ("$context" variables, API Gateway Developer Guide, "Customizing
 * HTTP API access logs", https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-logging-variables.html;
 * a variable with no value is logged as "-"). Passed the format string the stage is given, so
 * a change to the format changes the figure.
 */
export function accessLogLine(format: string): ModelledLine {
  const values: Record<string, string> = {
    '$context.requestId': 'JbVZ0iLmoAMEbHQ=',
    '$context.identity.sourceIp': '54.187.216.72',
    '$context.requestTime': '03/Dec/2026:12:14:27 +0000',
    '$context.httpMethod': 'POST',
    '$context.routeKey': 'POST /webhooks/{route}',
    '$context.path': '/webhooks/stripe',
    '$context.status': '202',
    '$context.protocol': 'HTTP/1.1',
    '$context.responseLength': '62',
    '$context.responseLatency': '41',
    '$context.integrationLatency': '38',
    '$context.integrationStatus': '202',
    '$context.integrationErrorMessage': '-',
    '$context.error.message': '-',
  };
  const sample = format.replace(/\$context\.[A-Za-z.]+/g, (name) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no sample value for ${name} in the access log format`);
    return value;
  });
  return modelled(sample, 'lib/stateless/webhook-api.ts, with values as API Gateway fills them (API Gateway Developer Guide, "Customizing HTTP API access logs", 2026-12-03)');
}

// ---------------------------------------------------------------------------------------------

const STRIPE_SECRET = 'whsec_retryproof-log-bytes-measurement';
/** A deployed function's name: the stack name, its logical id cut short, CloudFormation's suffix. */
const FUNCTION_NAMES = {
  ingest: 'Retryproof-IngestA1B2C3D4-Xy7Zq9Wm3Kp2',
  executor: 'Retryproof-ExecutorE5F6A7B8-Lm4Nb6Vc8Xz1',
  reconciler: 'Retryproof-ReconcilerC9D0E1F2-Qw2Er4Ty6Ui8',
} as const;
/** What Lambda sets for an invocation under active tracing; Powertools logs its Root as xray_trace_id. */
const TRACE_HEADER = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';

type Bucket = 'ingestNew' | 'ingestDuplicate' | 'executor' | 'reconciler';

interface Captured {
  readonly bucket: Bucket;
  readonly invocation: number;
  readonly line: string;
}

function kindOf(line: string): LineKind {
  if (!line.startsWith('{')) return 'other';
  try {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    if ('_aws' in parsed) return 'emf';
    if ('level' in parsed && 'message' in parsed) return 'powertools';
  } catch {
    return 'other';
  }
  return 'other';
}

const emptyFigures = (): Record<LineKind, { lines: number; bytes: number }> => ({
  powertools: { lines: 0, bytes: 0 },
  emf: { lines: 0, bytes: 0 },
  other: { lines: 0, bytes: 0 },
});

function perUnit(lines: readonly string[], units: number): KindFigures {
  const figures = emptyFigures();
  for (const line of lines) {
    const f = figures[kindOf(line)];
    f.lines += 1;
    f.bytes += Buffer.byteLength(`${line}\n`, 'utf8');
  }
  const round = (v: number): number => Math.round(v * 100) / 100;
  const out = emptyFigures();
  for (const kind of Object.keys(figures) as LineKind[]) {
    out[kind] = { lines: round(figures[kind].lines / units), bytes: round(figures[kind].bytes / units) };
  }
  return out;
}

/** Least squares of y = a + b·m over the invocations: the fixed part and the per-message part. */
function fitExecutor(invocations: readonly { messages: number; lines: readonly string[] }[]): { invocation: KindFigures; message: KindFigures } {
  const kinds: LineKind[] = ['powertools', 'emf', 'other'];
  const invocation = emptyFigures();
  const message = emptyFigures();
  const n = invocations.length;
  const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
  const ms = invocations.map((i) => i.messages);
  const mBar = mean(ms);
  const sxx = ms.reduce((s, m) => s + (m - mBar) ** 2, 0);
  for (const kind of kinds) {
    for (const field of ['lines', 'bytes'] as const) {
      const ys = invocations.map((i) => {
        const only = i.lines.filter((l) => kindOf(l) === kind);
        return field === 'lines' ? only.length : only.reduce((s, l) => s + Buffer.byteLength(`${l}\n`, 'utf8'), 0);
      });
      const yBar = mean(ys);
      const sxy = ms.reduce((s, m, j) => s + (m - mBar) * ((ys[j] ?? 0) - yBar), 0);
      const b = n < 2 || sxx === 0 ? yBar / Math.max(1, mBar) : sxy / sxx;
      const a = yBar - b * mBar;
      invocation[kind][field] = Math.round(a * 100) / 100;
      message[kind][field] = Math.round(b * 100) / 100;
    }
  }
  return { invocation, message };
}

/** Every metric stream of the EMF documents, the route's value written `<route>`. */
function metricStreamsOf(lines: readonly string[]): string[] {
  const streams = new Set<string>();
  for (const line of lines) {
    if (kindOf(line) !== 'emf') continue;
    const doc = JSON.parse(line) as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
    };
    for (const directive of doc._aws.CloudWatchMetrics) {
      for (const set of directive.Dimensions) {
        const dims = set
          .map((d) => `${d}=${d === 'route' ? '<route>' : String(doc[d])}`)
          .sort()
          .join(',');
        for (const metric of directive.Metrics) streams.add(`${directive.Namespace} ${metric.Name} {${dims}}`);
      }
    }
  }
  return [...streams].sort();
}

export interface MeasureOptions {
  /** New deliveries to send. @default 120 */
  readonly newDeliveries?: number;
  /** Duplicates of them to send, each of a different delivery, after it was answered. @default 6 (5% of the deliveries) */
  readonly duplicates?: number;
  /** Local services to use; started (and stopped) here when absent. */
  readonly services?: { readonly dynamoEndpoint: string; readonly sqsEndpoint: string };
  /** @default 2048, the cost model's body */
  readonly bodyBytes?: number;
}

/**
 * The environment lib/ gives each function (retryproof-function.ts and webhook-receiver.ts),
 * plus what Lambda itself sets and the SDK's endpoint variables pointing at the local services.
 * Whatever the caller set for Powertools (the test suite silences it) is taken away: deployed,
 * no POWERTOOLS_LOG_LEVEL is set, so the level is Powertools' default, INFO.
 */
function deployedEnvironment(service: string, functionName: string, shared: Record<string, string>): Record<string, string | undefined> {
  return {
    ...shared,
    POWERTOOLS_SERVICE_NAME: service,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    POWERTOOLS_LOG_LEVEL: undefined,
    POWERTOOLS_METRICS_DISABLED: undefined,
    POWERTOOLS_DEV: undefined,
    POWERTOOLS_LOGGER_LOG_EVENT: undefined,
    POWERTOOLS_LOGGER_SAMPLE_RATE: undefined,
    LOG_LEVEL: undefined,
    AWS_LAMBDA_LOG_LEVEL: undefined,
    AWS_LAMBDA_LOG_FORMAT: undefined,
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    _X_AMZN_TRACE_ID: TRACE_HEADER,
  };
}

function applyEnvironment(variables: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(variables)) {
    if (value === undefined) Reflect.deleteProperty(process.env, name);
    else process.env[name] = value;
  }
}

/** Measures the bytes each function writes per unit of work; see the file's header. */
export async function measureLogBytes(options: MeasureOptions = {}): Promise<LogBytesMeasurement> {
  const newDeliveries = options.newDeliveries ?? 120;
  const duplicates = options.duplicates ?? 6;
  const bodyBytes = options.bodyBytes ?? 2048;
  const started = options.services === undefined ? await Promise.all([startLocalDynamo(), startLocalSqs()]) : undefined;
  const dynamoEndpoint = options.services?.dynamoEndpoint ?? started?.[0].endpoint ?? '';
  const sqsEndpoint = options.services?.sqsEndpoint ?? started?.[1].endpoint ?? '';
  const savedEnv = { ...process.env };
  const dynamo: DynamoDBClient = localDynamoClient(dynamoEndpoint);
  const sqs: SQSClient = localSqsClient(sqsEndpoint);
  const captured: Captured[] = [];
  let bucket: Bucket = 'ingestNew';
  let invocation = 0;
  const realOut = process.stdout.write.bind(process.stdout);
  const realErr = process.stderr.write.bind(process.stderr);
  let pending = '';
  const record = (chunk: string | Uint8Array): boolean => {
    pending += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    let at = pending.indexOf('\n');
    while (at >= 0) {
      const line = pending.slice(0, at);
      pending = pending.slice(at + 1);
      if (line !== '') captured.push({ bucket, invocation, line });
      at = pending.indexOf('\n');
    }
    return true;
  };
  try {
    const suffix = `logbytes-${Date.now().toString(36)}`;
    const eventsTable = await createEventsTable(dynamo, `retryproof-events-${suffix}`);
    const { queueUrl } = await createQueuePair(sqs, sqsEndpoint, `retryproof-${suffix}`, { maxReceiveCount: 10 });
    const resolved = resolveConfig(shippedConfig);
    const route = resolved.routes[0];
    if (route === undefined) throw new Error('retryproof.config.ts has no route');
    const shared = {
      [ENV.eventsTable]: eventsTable,
      [ENV.queueUrl]: queueUrl,
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
      AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    };
    const deployment = { config: resolved, eventsTable, queueUrl };
    const clients = { dynamo, sqs };

    process.stdout.write = record;
    process.stderr.write = record;

    // Ingest: each function's Logger and Metrics are built under its own environment, as at a cold start.
    applyEnvironment(deployedEnvironment(SERVICE.ingest, FUNCTION_NAMES.ingest, shared));
    const ingest = wireIngest(deployment, clients, { secrets: new StaticSecretSource({ [route.secretName]: STRIPE_SECRET }) });
    const events = Array.from({ length: newDeliveries }, (_, i) => {
      const key = `evt_1Q${String(i).padStart(6, '0')}xmplLogBytesMeasure`;
      const body = payloadOf(key, bodyBytes);
      const headers = signDelivery(route.signature, STRIPE_SECRET, Buffer.from(body), { nowSeconds: Math.floor(Date.now() / 1000) });
      return { route: route.name, body, headers };
    });
    const ingestContext = (): Context => lambdaContext(FUNCTION_NAMES.ingest);
    for (const e of events) {
      invocation += 1;
      const answer = await ingest(httpApiEvent(e), ingestContext());
      if (answer.statusCode !== 202) throw new Error(`a new delivery was answered ${String(answer.statusCode)}`);
    }
    bucket = 'ingestDuplicate';
    for (const e of events.slice(0, duplicates)) {
      invocation += 1;
      const answer = await ingest(httpApiEvent(e), ingestContext());
      if (answer.statusCode !== 202) throw new Error(`a duplicate was answered ${String(answer.statusCode)}`);
    }

    // Executor: batches of 1 and of 5 (the cost model's fill), so a fit splits the per-invocation part from the per-message one.
    bucket = 'executor';
    applyEnvironment(deployedEnvironment(SERVICE.executor, FUNCTION_NAMES.executor, shared));
    const { default: handleStripeEvent } = await import('../actions/handle-stripe-event.ts');
    const executor = wireExecutor(deployment, clients, { actions: actionRegistryOf({ [route.action]: { default: handleStripeEvent } }) }) as unknown as SqsHandler;
    const sizes = new Map<number, number>();
    let drained = 0;
    let polls = 0;
    while (drained < newDeliveries) {
      polls += 1;
      if (polls > newDeliveries * 4) throw new Error(`the executor drained ${String(drained)} of ${String(newDeliveries)} messages`);
      const batchSize = polls <= 12 ? 1 : 5;
      invocation += 1;
      const result = await pollOnce(executor, { sqs, queueUrl, batchSize, context: () => lambdaContext(FUNCTION_NAMES.executor) });
      if (result.received === 0) {
        invocation -= 1;
        continue;
      }
      if (result.handedBack > 0) throw new Error(`the executor handed back ${String(result.handedBack)} messages`);
      sizes.set(invocation, result.received);
      drained += result.deleted;
    }

    // Reconciler: its own Lambda entry point, built as its generated entry builds it, run once as the schedule does.
    bucket = 'reconciler';
    applyEnvironment(deployedEnvironment(SERVICE.reconciler, FUNCTION_NAMES.reconciler, shared));
    invocation += 1;
    const { reconcilerLambda } = await import('../lambdas/reconciler/lambda.ts');
    // The entry reads the configuration its bundle carries (lambdas/config/shipped-config.ts); here it runs unbundled.
    const holder = globalThis as { RETRYPROOF_SHIPPED_CONFIG?: string };
    holder.RETRYPROOF_SHIPPED_CONFIG = shippedConfigJson(shippedConfig, new Map());
    try {
      const reconcile = reconcilerLambda({}) as unknown as (event: unknown, context: Context) => Promise<unknown>;
      await reconcile({}, lambdaContext(FUNCTION_NAMES.reconciler));
    } finally {
      Reflect.deleteProperty(holder, 'RETRYPROOF_SHIPPED_CONFIG');
    }

    process.stdout.write = realOut;
    process.stderr.write = realErr;
    if (pending !== '') captured.push({ bucket, invocation, line: pending });

    const linesOf = (b: Bucket): string[] => captured.filter((c) => c.bucket === b).map((c) => c.line);
    const executorInvocations = [...sizes].map(([id, messages]) => ({
      messages,
      lines: captured.filter((c) => c.bucket === 'executor' && c.invocation === id).map((c) => c.line),
    }));
    const fit = fitExecutor(executorInvocations);
    const accessLog = accessLogLine(accessLogFormat());
    const all = captured.map((c) => c.line);
    const stack = stackInventory();
    const { xray: _xray, ...untraced } = PLATFORM_LINES;
    const platform = stack.tracedFunctions > 0 ? PLATFORM_LINES : untraced;
    const raw = [...all, ...Object.values(platform).map((l) => l.sample), accessLog.sample].join('\n');
    const samples: Record<string, string> = {};
    for (const c of captured) {
      const name = `${c.bucket}.${kindOf(c.line)}`;
      samples[name] ??= c.line;
    }
    return {
      measuredOn: new Date().toISOString().slice(0, 10),
      configuration: {
        logLevel: 'INFO (Powertools default: lib/ sets no POWERTOOLS_LOG_LEVEL)',
        metricsNamespace: METRICS_NAMESPACE,
        route: `${route.name} (${route.signature.scheme}), retryproof.config.ts`,
        bodyBytes,
      },
      scenario: { newDeliveries, duplicates, executorInvocations: executorInvocations.length, reconcilerRuns: 1 },
      functions: {
        ingestNew: perUnit(linesOf('ingestNew'), newDeliveries),
        ingestDuplicate: perUnit(linesOf('ingestDuplicate'), Math.max(1, duplicates)),
        executorInvocation: fit.invocation,
        executorMessage: fit.message,
        reconcilerRun: perUnit(linesOf('reconciler'), 1),
      },
      platform,
      accessLog,
      compressionRatio: Math.round((gzipSync(raw).length / Buffer.byteLength(raw)) * 1000) / 1000,
      metricStreams: metricStreamsOf(all),
      samples,
      stack,
    };
  } finally {
    process.stdout.write = realOut;
    process.stderr.write = realErr;
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) Reflect.deleteProperty(process.env, name);
    Object.assign(process.env, savedEnv);
    dynamo.destroy();
    sqs.destroy();
    if (started !== undefined) await Promise.all(started.map((s) => s.stop()));
  }
}

/** The access log format the stage is given, read from the construct's source so the two cannot differ. */
export function accessLogFormat(): string {
  return JSON.stringify(ACCESS_LOG_FIELDS);
}

function main(argv: readonly string[]): Promise<void> {
  return measureLogBytes().then((m) => {
    const json = `${JSON.stringify(m, null, 2)}\n`;
    if (argv.includes('--write')) writeFileSync(LOG_BYTES_FILE, json);
    process.stdout.write(json);
  });
}

if (import.meta.main) await main(process.argv.slice(2));
