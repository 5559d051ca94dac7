/**
 * One run of a deployed receiver's own reconciler function (`retryproof --stack X reconcile`).
 * The effects check reads the ledgers the receiver's actions declare, which are the consumer's
 * code: the construct bundles those modules into the reconciler at synth, and this CLI cannot
 * load them. So the CLI runs the function itself, as `aws lambda invoke` would, and prints the
 * report the function returns (lambdas/reconciler/lambda.ts): an event `{"fromMs", "toMs"}`
 * reconciles that window from its start, without the cursor; `{}` is one more scheduled run.
 *
 * The function is the resource the receiver's descriptor names as `configResource` (the
 * reconciler, lib/webhook-receiver.ts), found by DescribeStackResource. A run the CLI could not
 * start checked nothing, and one that failed gave no report: each is a CliError (exit 1) that says so.
 *
 * Lambda's Invoke (RequestResponse) answers 200 with the function's return value as its
 * payload, or, when the function threw, 200 with `X-Amz-Function-Error` set and the error
 * object as the payload (Lambda API Reference, Invoke: FunctionError, "Handled" or
 * "Unhandled"; node_modules/@aws-sdk/client-lambda/dist-types/models/models_0.d.ts).
 */
import { DescribeStackResourceCommand } from '@aws-sdk/client-cloudformation';
import { InvokeCommand } from '@aws-sdk/client-lambda';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { ReconcileReport } from '../lambdas/reconciler/reconcile.ts';
import { awsFailureLine } from './aws-errors.ts';
import type { AwsClients } from './aws-clients.ts';
import { CliError } from './errors.ts';
import type { CloudFormation } from './receivers.ts';
import type { Target } from './target.ts';

/** What the reconciler function runs from: a window, or nothing for a scheduled run (lambda.ts, ManualWindow). */
export type ReconcilerEvent = { readonly fromMs: number; readonly toMs: number } | Record<string, never>;

const LAMBDA_FUNCTION = 'AWS::Lambda::Function';

/** The function ran and threw, or returned no report: what it did before is not known. */
export class ReconcilerRunFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReconcilerRunFailedError';
  }
}

/**
 * The physical name of the receiver's reconciler function.
 * @throws Error when the descriptor's resource is not a function of the stack
 */
export async function reconcilerFunctionName(cfn: CloudFormation, stackName: string, logicalId: string): Promise<string> {
  const detail = (await cfn.send(new DescribeStackResourceCommand({ StackName: stackName, LogicalResourceId: logicalId }))).StackResourceDetail;
  if (detail?.ResourceType !== LAMBDA_FUNCTION || detail.PhysicalResourceId === undefined || detail.PhysicalResourceId === '') {
    throw new Error(`${logicalId}, the resource the receiver's descriptor names, is ${detail?.ResourceType ?? 'not in the stack'}, not a deployed ${LAMBDA_FUNCTION}`);
  }
  return detail.PhysicalResourceId;
}

function isReport(value: unknown): value is ReconcileReport {
  const report = value as Partial<ReconcileReport> | null;
  return typeof report === 'object' && report !== null && typeof report.counts === 'object' && typeof report.window === 'object' && Array.isArray(report.needsAttention);
}

/**
 * Runs the function once and returns its report.
 * @throws ReconcilerRunFailedError when the function threw (its error type and message) or returned something else
 */
export async function invokeReconciler(lambda: Pick<LambdaClient, 'send'>, functionName: string, event: ReconcilerEvent): Promise<ReconcileReport> {
  const answer = await lambda.send(new InvokeCommand({ FunctionName: functionName, InvocationType: 'RequestResponse', Payload: Buffer.from(JSON.stringify(event)) }));
  const text = answer.Payload === undefined ? '' : Buffer.from(answer.Payload).toString('utf8');
  if (answer.FunctionError !== undefined) {
    let thrown: { errorType?: unknown; errorMessage?: unknown } = {};
    try {
      thrown = JSON.parse(text) as typeof thrown;
    } catch {
      // Not JSON: the payload itself says what went wrong.
    }
    const type = typeof thrown.errorType === 'string' ? thrown.errorType : 'Error';
    const what = typeof thrown.errorMessage === 'string' ? `${type}: ${thrown.errorMessage}` : text.slice(0, 300);
    throw new ReconcilerRunFailedError(`${answer.FunctionError}: ${what.split('\n')[0] ?? ''}`);
  }
  let report: unknown;
  try {
    report = JSON.parse(text);
  } catch {
    report = undefined;
  }
  if (!isReport(report)) throw new ReconcilerRunFailedError(`it returned something other than a reconciliation report: ${text.slice(0, 200)}`);
  return report;
}

/**
 * One run of the deployed receiver's reconciler, by the function itself.
 * @throws CliError saying that no ledger was checked (nothing ran, or the run failed), and why
 */
export async function reconcileDeployed(target: Target, aws: AwsClients, env: NodeJS.ProcessEnv, event: ReconcilerEvent, progress: (text: string) => void): Promise<ReconcileReport> {
  const { stack, receiver } = target;
  if (stack === undefined || receiver === undefined) throw new Error('reconcileDeployed needs a deployed receiver');
  const notRun = (why: string, err: unknown): CliError =>
    new CliError(`${target.description}: its reconciler did not run, so nothing was reconciled and no ledger was checked: ${why}`, { cause: err });
  const because = (err: unknown): string => awsFailureLine(err, env) ?? (err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message.split('\n')[0] ?? ''}` : String(err));
  const cfn = aws.cloudFormation(stack.region);
  let functionName: string;
  try {
    functionName = await reconcilerFunctionName(cfn, stack.name, receiver.configResource);
  } catch (err) {
    throw notRun(`cannot find its function in stack ${stack.name}: ${because(err)}`, err);
  } finally {
    cfn.destroy();
  }
  // The function runs in the receiver's Region, with the receiver's ledgers and role.
  const lambda = aws.lambda(receiver.region);
  try {
    progress(`reconcile: running ${functionName} (at most its timeout)`);
    return await invokeReconciler(lambda, functionName, event);
  } catch (err) {
    if (!(err instanceof ReconcilerRunFailedError)) throw notRun(`function ${functionName}: ${because(err)}`, err);
    throw new CliError(
      `${target.description}: its reconciler's run failed with no report, so take it that no ledger was checked (the next run checks them again): function ${functionName}: ${err.message}`,
      { cause: err },
    );
  } finally {
    lambda.destroy();
  }
}
