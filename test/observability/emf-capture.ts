/**
 * What the functions really emit: EMF documents captured from stdout while real handlers
 * run on DynamoDB Local and fauxqs, and the reconciler's own Lambda entry point
 * (lambdas/reconciler/lambda.ts, over the demo's ledger module) loaded with the environment the stack gives it.
 */
import { inject, vi } from 'vitest';
import type { Context } from 'aws-lambda';
import { DEMO_LEDGER_TABLE_ENV } from '../../lambdas/demo/demo-environment.ts';
import { ENV } from '../../lambdas/config/env.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { shipConfig, shippedJsonOf } from '../support/shipped-config.ts';

/** One metric of one EMF document, under the dimensions it was emitted with. */
export interface EmittedMetric {
  readonly namespace: string;
  readonly name: string;
  readonly unit: string;
  readonly value: unknown;
  readonly dimensions: Readonly<Record<string, string>>;
}

interface EmfDirective {
  readonly Namespace: string;
  readonly Dimensions: string[][];
  readonly Metrics: { Name: string; Unit: string }[];
}

/** Flattens EMF documents into one row per metric and dimension set. */
function flatten(documents: readonly Record<string, unknown>[]): EmittedMetric[] {
  const rows: EmittedMetric[] = [];
  for (const doc of documents) {
    for (const directive of (doc._aws as { CloudWatchMetrics: EmfDirective[] }).CloudWatchMetrics) {
      for (const set of directive.Dimensions) {
        const dimensions = Object.fromEntries(set.map((d) => [d, String(doc[d])]));
        for (const metric of directive.Metrics) {
          rows.push({ namespace: directive.Namespace, name: metric.Name, unit: metric.Unit, value: doc[metric.Name], dimensions });
        }
      }
    }
  }
  return rows;
}

/**
 * Runs `act` with `variables` set and stdout and stderr captured, and returns every JSON line written
 * meanwhile (EMF documents and log lines alike). Powertools reads its variables when a
 * Logger or Metrics is built, so `act` builds the handlers it runs. What `act` throws is
 * rethrown once stdout and the variables are back.
 */
export async function captureJsonLines(variables: Readonly<Record<string, string>>, act: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const written: string[] = [];
  const saved = { ...process.env };
  Object.assign(process.env, variables);
  const record = (chunk: string | Uint8Array) => {
    written.push(chunk.toString());
    return true;
  };
  // Powertools writes a warning or an error to stderr, like console.warn.
  const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(record), vi.spyOn(process.stderr, 'write').mockImplementation(record)];
  try {
    await act();
  } finally {
    for (const spy of spies) spy.mockRestore();
    restoreVariables(Object.keys(variables), saved);
  }
  return written
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Runs `act` with Powertools metrics on (the suite turns them off) and returns every EMF metric it wrote. */
export async function captureEmf(act: () => Promise<void>): Promise<EmittedMetric[]> {
  const lines = await captureJsonLines({ POWERTOOLS_METRICS_DISABLED: 'false' }, act);
  return flatten(lines.filter((line) => '_aws' in line));
}

/** Puts back the variables `names` as `saved` had them: a variable that was unset is unset again. */
function restoreVariables(names: readonly string[], saved: NodeJS.ProcessEnv): void {
  for (const name of names) Reflect.deleteProperty(process.env, name);
  Object.assign(process.env, Object.fromEntries(names.flatMap((name) => (saved[name] === undefined ? [] : [[name, saved[name]]]))));
}

/** Where the reconciler's entry point finds its table, queue and ledger, as the stack sets them. */
export interface ReconcilerEnvironment {
  readonly config: RetryproofConfig;
  readonly eventsTable: string;
  readonly ledgerTable: string;
  readonly queueUrl: string;
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
}

type ReconcilerHandler = (event: Record<string, unknown>, context: Context) => Promise<unknown>;

/**
 * A fresh copy of the reconciler Lambda over the demo's ledger module, as its generated entry builds it; its cold start run in `environment`: the
 * variables the stack sets, and the SDK's own endpoint variables pointing its clients at the
 * local services. Call it inside a capture, since the module builds its Logger and Metrics at load.
 * Returns the handler and a function that puts the environment back.
 */
export async function loadReconcilerHandler(environment: ReconcilerEnvironment): Promise<{ handler: ReconcilerHandler; restore: () => void }> {
  const variables: Record<string, string> = {
    [ENV.eventsTable]: environment.eventsTable,
    [DEMO_LEDGER_TABLE_ENV]: environment.ledgerTable,
    [ENV.queueUrl]: environment.queueUrl,
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: environment.dynamoEndpoint,
    AWS_ENDPOINT_URL_SQS: environment.sqsEndpoint,
  };
  const saved = { ...process.env };
  Object.assign(process.env, variables);
  const unship = shipConfig(shippedJsonOf(environment.config));
  const restore = () => {
    restoreVariables(Object.keys(variables), saved);
    unship();
  };
  try {
    // A new module instance per call: each reads its environment once, at load, as a cold start does.
    vi.resetModules();
    const { reconcilerLambda } = await import('../../lambdas/reconciler/lambda.ts');
    const handler = reconcilerLambda({ payout: await import('../../lambdas/demo/payout-ledger.ts') }) as unknown as ReconcilerHandler;
    return { handler, restore };
  } catch (err) {
    restore();
    throw err;
  }
}

/** Loads the reconciler's entry point in `environment` and runs it once, as the hourly schedule does. */
export async function runReconcilerHandler(environment: ReconcilerEnvironment): Promise<void> {
  const { handler, restore } = await loadReconcilerHandler(environment);
  try {
    await handler({}, lambdaContext('retryproof-reconciler'));
  } finally {
    restore();
  }
}

/** The environment the stack gives the reconciler, over a reconciler fixture's tables and queue. */
export function reconcilerEnvironmentOf(
  rf: { readonly eventsTable: string; readonly ledgerTable: string; readonly fx: { readonly queueUrl: string } },
  config: RetryproofConfig,
): ReconcilerEnvironment {
  return {
    config,
    eventsTable: rf.eventsTable,
    ledgerTable: rf.ledgerTable,
    queueUrl: rf.fx.queueUrl,
    dynamoEndpoint: inject('dynamoEndpoint'),
    sqsEndpoint: inject('sqsEndpoint'),
  };
}
