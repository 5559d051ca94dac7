/**
 * What the functions really emit: EMF documents captured from stdout while real handlers
 * run on DynamoDB Local and fauxqs, and the reconciler's own Lambda entry point
 * (lambdas/reconciler/handler.ts) loaded with the environment the stack gives it.
 */
import { vi } from 'vitest';
import type { Context } from 'aws-lambda';
import { ENV } from '../../lambdas/config/env.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';

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
 * Runs `act` with Powertools metrics on (the suite turns them off) and stdout captured, and
 * returns every EMF metric written meanwhile. Metrics objects read the switch when they are
 * built, so `act` builds the handlers it runs. What `act` throws is rethrown after the capture ends.
 */
export async function captureEmf(act: () => Promise<void>): Promise<EmittedMetric[]> {
  const written: string[] = [];
  const previous = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(chunk.toString());
    return true;
  });
  try {
    await act();
  } finally {
    spy.mockRestore();
    if (previous === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = previous;
  }
  const documents = written
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.startsWith('{') && line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return flatten(documents);
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
 * A fresh copy of lambdas/reconciler/handler.ts, its cold start run in `environment`: the
 * variables the stack sets, and the SDK's own endpoint variables pointing its clients at the
 * local services. Call it inside captureEmf, since the module builds its Metrics at load.
 * Returns the handler and a function that puts the environment back.
 */
export async function loadReconcilerHandler(environment: ReconcilerEnvironment): Promise<{ handler: ReconcilerHandler; restore: () => void }> {
  const variables: Record<string, string> = {
    [ENV.config]: JSON.stringify(environment.config),
    [ENV.eventsTable]: environment.eventsTable,
    [ENV.ledgerTable]: environment.ledgerTable,
    [ENV.queueUrl]: environment.queueUrl,
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: environment.dynamoEndpoint,
    AWS_ENDPOINT_URL_SQS: environment.sqsEndpoint,
  };
  const saved = { ...process.env };
  Object.assign(process.env, variables);
  // Puts back exactly the variables set here: those that were unset become unset again.
  const restore = () => {
    for (const name of Object.keys(variables)) Reflect.deleteProperty(process.env, name);
    Object.assign(process.env, Object.fromEntries(Object.keys(variables).flatMap((name) => (saved[name] === undefined ? [] : [[name, saved[name]]]))));
  };
  try {
    // A new module instance per call: each reads its environment once, at load, as a cold start does.
    vi.resetModules();
    const module = (await import('../../lambdas/reconciler/handler.ts')) as { handler: ReconcilerHandler };
    return { handler: module.handler, restore };
  } catch (err) {
    restore();
    throw err;
  }
}
