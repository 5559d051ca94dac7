/**
 * `retryproof --stack X reconcile` runs the deployed receiver's own reconciler function, which
 * holds the ledgers the receiver's actions declare, and prints its report; a run that could
 * not happen says that no ledger was checked. The stack is the app's own, really synthesized,
 * served by the CloudFormation stub; its table and queues stand in DynamoDB Local and fauxqs.
 * There is no local Lambda service, so Lambda's Invoke is a stub on 127.0.0.1
 * (lambda-invoke-stub.ts), and behind it runs the real reconciler entry point
 * (lambdas/reconciler/lambda.ts) with a user's ledger the CLI has no way to load: an in-memory
 * one, holding an entry no record stands for.
 */
import { shippedConfigJson } from '../../lib/stateless/shipped-config.ts';
import { randomUUID } from 'node:crypto';
import type { CfnElement } from 'aws-cdk-lib';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { AwsClients } from '../../cli/aws-clients.ts';
import { EXIT } from '../../cli/errors.ts';
import { runCli } from '../../cli/main.ts';
import { ENV } from '../../lambdas/config/env.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import type { Ledger, LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import type { ReconcileReport } from '../../lambdas/reconciler/reconcile.ts';
import { createEventsTable, createQueuePair, localDynamoClient, localS3Client, localSqsClient } from '../../local/aws-clients.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';
import { synthesize } from '../cdk/stack-fixture.ts';
import { cloudFormationStub, deployedStack, receiverIds, resolveValue } from './cloudformation-stub.ts';
import { LambdaRefusal, startLambdaInvokeStub } from './lambda-invoke-stub.ts';
import type { LambdaInvokeStub, StubFunction } from './lambda-invoke-stub.ts';

const ROUTES: RetryproofConfig['routes'] = [
  { name: 'demo', signature: { scheme: 'standard-webhooks' }, secretName: 'retryproof/demo', actionTimeSeconds: 10, action: 'payout' },
];
const RECONCILIATION = { windowHours: 24, everyMinutes: 60, settleSeconds: 300, stuckAfterSeconds: 900 };
const built = synthesize({ demo: true, routes: ROUTES, reconciliation: RECONCILIATION });

const run = randomUUID().slice(0, 8);
const setupDynamo = localDynamoClient(inject('dynamoEndpoint'));
const setupSqs = localSqsClient(inject('sqsEndpoint'));
const eventsTable = await createEventsTable(setupDynamo, `reconcile-events-${run}`);
const queues = await createQueuePair(setupSqs, inject('sqsEndpoint'), `reconcile-${run}`, { maxReceiveCount: 5 });
const ids = receiverIds(built.stack.receiver);
const STACK = deployedStack(built.stack, { [ids.table]: eventsTable, [ids.queue]: queues.queueUrl, [ids.dlq]: queues.dlqUrl });
const reconcilerId = built.stack.getLogicalId(built.stack.receiver.reconcilerFunction.node.defaultChild as CfnElement);
/** The name CloudFormation gives the reconciler function (the stub's DescribeStackResource). */
const FUNCTION_NAME = resolveValue(STACK, { Ref: reconcilerId });

/** The user's ledger: only the function holds it (the construct bundles it in), never the CLI. */
const HOUR = 3_600_000;
const entries: LedgerEntry[] = [{ entryId: `e-${run}`, route: 'demo', idempotencyKey: 'never-received', postedAt: Date.now() - 2 * HOUR, status: 'posted', attempt: 1 }];
const userLedger: Ledger = {
  post: () => Promise.reject(new Error('the reconciler never posts')),
  listWindow: (fromMs, toMs) => Promise.resolve(entries.filter((e) => e.postedAt >= fromMs && e.postedAt < toMs)),
  reverse: () => Promise.resolve('not-found'),
};

type ReconcilerHandler = (event: unknown, context: Context) => Promise<ReconcileReport>;

/**
 * The reconciler's entry point as its generated entry builds it, with the user's ledger for the
 * route's action, at a cold start in the environment the stack gives it (its clients pointed at
 * the local services by the SDK's endpoint variables).
 */
async function coldStart(): Promise<{ handler: ReconcilerHandler; restore: () => void }> {
  const config: RetryproofConfig = { routes: ROUTES, reconciliation: RECONCILIATION };
  const variables: Record<string, string> = {
    [ENV.eventsTable]: eventsTable,
    [ENV.queueUrl]: queues.queueUrl,
    // The configuration as a function carried it before it moved into the bundle.
    RETRYPROOF_CONFIG: JSON.stringify(config),
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: inject('dynamoEndpoint'),
    AWS_ENDPOINT_URL_SQS: inject('sqsEndpoint'),
  };
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  const shipped = globalThis as { RETRYPROOF_SHIPPED_CONFIG?: string };
  // The configuration as the construct bundles it into the function (config/shipped-config.ts).
  shipped.RETRYPROOF_SHIPPED_CONFIG = shippedConfigJson(config, new Map());
  Object.assign(process.env, variables);
  const restore = (): void => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) Reflect.deleteProperty(process.env, name);
      else process.env[name] = value;
    }
    Reflect.deleteProperty(shipped, 'RETRYPROOF_SHIPPED_CONFIG');
  };
  const { reconcilerLambda } = await import('../../lambdas/reconciler/lambda.ts');
  return { handler: reconcilerLambda({ payout: { default: userLedger } }) as unknown as ReconcilerHandler, restore };
}

let lambdaStub: LambdaInvokeStub;
let restoreEnvironment: () => void = () => undefined;
/** What the function does on this test's invocations: by default, the real reconciler. */
let behaviour: StubFunction;
let realReconciler: StubFunction;

beforeAll(async () => {
  const { handler, restore } = await coldStart();
  restoreEnvironment = restore;
  realReconciler = (functionName, event) => {
    if (functionName !== FUNCTION_NAME) return Promise.reject(new LambdaRefusal(404, 'ResourceNotFoundException', `Function not found: ${functionName}`));
    return handler(event, lambdaContext(functionName));
  };
  lambdaStub = await startLambdaInvokeStub((functionName, event) => behaviour(functionName, event));
});

beforeEach(() => {
  behaviour = realReconciler;
  lambdaStub.invocations.length = 0;
});

afterAll(async () => {
  restoreEnvironment();
  await lambdaStub.close();
  setupDynamo.destroy();
  setupSqs.destroy();
});

const aws = (): AwsClients => ({
  region: () => Promise.resolve('eu-west-1'),
  cloudFormation: () => cloudFormationStub([STACK]),
  dynamo: () => localDynamoClient(inject('dynamoEndpoint')),
  sqs: () => localSqsClient(inject('sqsEndpoint')),
  s3: () => localS3Client(inject('sqsEndpoint')),
  lambda: () => lambdaStub.client(),
});

async function cli(now: number, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['--stack', 'Retryproof', 'reconcile', ...argv], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    stderrIsTty: false,
    env: {},
    now: () => now,
    aws: aws(),
  });
  return { code, stdout, stderr };
}

describe('retryproof --stack X reconcile', () => {
  it('with neither flag, invokes the receiver\'s reconciler with {} (one more scheduled run), which checks the user\'s ledger', async () => {
    // Act
    const out = await cli(Date.now(), '--json');
    // Assess
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(lambdaStub.invocations).toEqual([{ functionName: FUNCTION_NAME, event: {} }]);
    const report = JSON.parse(out.stdout) as ReconcileReport;
    // A scheduled run goes through the cursor, over the receiver's window less its settle margin.
    expect(report.cursor).toMatchObject({ runs: 1 });
    expect(report.window.toMs - report.window.fromMs).toBe(24 * HOUR - 300_000);
    // The entry only the user's ledger holds: found by the function, which has that ledger.
    expect(report.counts.orphans).toBe(1);
    expect(report.needsAttention).toContainEqual({ route: 'demo', key: 'never-received', finding: 'orphan-entry', detail: `entries e-${run}` });
  });

  it('with --window and --settle, sends the window it computed, which the function reconciles as given, and prints the report', async () => {
    // Prepare
    const now = Date.now();
    // Act
    const out = await cli(now, '--window', '3h', '--settle', '0s');
    // Assess
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(lambdaStub.invocations).toEqual([{ functionName: FUNCTION_NAME, event: { fromMs: now - 3 * HOUR, toMs: now } }]);
    const [heading, columns, values, , findingColumns, finding] = out.stdout.split('\n');
    expect(heading).toMatch(new RegExp(`^window ${new Date(now - 3 * HOUR).toISOString()} \\.\\. ${new Date(now).toISOString()}, \\d+ ms$`));
    expect(columns?.split(/ {2,}/)).toEqual(['scanned', 're-enqueued', 'reversed', 'missing', 'orphans', 'failed', 'parked', 'needs attention']);
    expect(values?.trim().split(/\s+/)).toEqual(['0', '0', '0', '0', '1', '0', '0', '1']);
    expect(findingColumns?.trim().split(/\s{2,}/)).toEqual(['finding', 'route', 'key', 'detail']);
    expect(finding?.trim().split(/\s{2,}/)).toEqual(['orphan-entry', 'demo', 'never-received', `entries e-${run}`]);
  });

  it('says plainly that no ledger was checked, exit 1, when Lambda refuses the invocation', async () => {
    // Prepare
    behaviour = () =>
      Promise.reject(
        new LambdaRefusal(
          403,
          'AccessDeniedException',
          `User: arn:aws:iam::111111111111:user/ops is not authorized to perform: lambda:InvokeFunction on resource: arn:aws:lambda:eu-west-1:111111111111:function:${FUNCTION_NAME} because no identity-based policy allows the lambda:InvokeFunction action`,
        ),
      );
    // Act
    const out = await cli(Date.now(), '--json');
    // Assess
    expect(out.code).toBe(EXIT.failed);
    expect(out.stdout).toBe('');
    expect(out.stderr).toBe(
      `retryproof reconcile: stack Retryproof: its reconciler did not run, so nothing was reconciled and no ledger was checked: function ${FUNCTION_NAME}: ` +
        'AWS refused lambda:InvokeFunction to arn:aws:iam::111111111111:user/ops: use a role that allows lambda:InvokeFunction (or ask for it)\n',
    );
  });

  it('says plainly to take the ledgers as not checked, exit 1, when the run itself fails', async () => {
    // Prepare: the function throws, as a ledger that cannot be reached makes it.
    behaviour = () => Promise.reject(Object.assign(new Error('connect ETIMEDOUT 10.0.0.12:443'), { name: 'LedgerUnreachable' }));
    // Act
    const out = await cli(Date.now());
    // Assess
    expect(out.code).toBe(EXIT.failed);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain(
      `retryproof reconcile: stack Retryproof: its reconciler's run failed with no report, so take it that no ledger was checked (the next run checks them again): ` +
        `function ${FUNCTION_NAME}: Unhandled: LedgerUnreachable: connect ETIMEDOUT 10.0.0.12:443\n`,
    );
  });
});
