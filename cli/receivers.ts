/**
 * Finds deployed receivers through CloudFormation. Every WebhookReceiver writes one output
 * whose value is its descriptor (lambdas/config/receiver-descriptor.ts): the receivers of a
 * stack are the outputs whose values parse as one, whatever their keys, logical ids or
 * construct ids. A receiver's configuration is not in its outputs: it is the metadata of the
 * function its descriptor names, in the template CloudFormation deployed (GetTemplate), the
 * same configuration the construct bundled into the functions.
 *
 * A stack that does not exist: DescribeStacks answers ValidationError "Stack with id X does not
 * exist" (no modelled error; boto/boto3#2807 shows the wire answer,
 * aws-actions/aws-cloudformation-github-deploy#129 the same in SDK v3).
 */
import { DescribeStacksCommand, GetTemplateCommand } from '@aws-sdk/client-cloudformation';
import type { CloudFormationClient, Output, Stack } from '@aws-sdk/client-cloudformation';
import { deployedConfigOf, parseReceiverDescriptor } from '../lambdas/config/receiver-descriptor.ts';
import type { ConfigResource, ReceiverDescriptor } from '../lambdas/config/receiver-descriptor.ts';
import { resolveConfig } from '../lambdas/config/resolve-config.ts';
import type { ResolvedConfig } from '../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../lambdas/config/route-config.ts';
import { CliError, UsageError } from './errors.ts';
import { nearest } from './suggest.ts';

/** What the CLI calls on CloudFormation: a client, or a test's stub of one. */
export type CloudFormation = Pick<CloudFormationClient, 'send'>;

export interface FoundReceiver {
  readonly stackName: string;
  readonly descriptor: ReceiverDescriptor;
}

/** The receivers among a stack's outputs, sorted by their id. */
export function receiversIn(stackName: string, outputs: readonly Output[]): FoundReceiver[] {
  return outputs
    .map((o) => parseReceiverDescriptor(o.OutputValue))
    .filter((d): d is ReceiverDescriptor => d !== undefined)
    .map((descriptor) => ({ stackName, descriptor }))
    .sort((a, b) => a.descriptor.receiver.localeCompare(b.descriptor.receiver));
}

function isMissingStack(err: unknown): boolean {
  return err instanceof Error && err.name === 'ValidationError' && /does not exist/.test(err.message);
}

/**
 * The stack's receivers.
 * @throws CliError when there is no such stack, or it has no receiver
 */
export async function stackReceivers(cfn: CloudFormation, stackName: string, region: string): Promise<FoundReceiver[]> {
  let stack: Stack | undefined;
  try {
    stack = (await cfn.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
  } catch (err) {
    if (isMissingStack(err)) throw new CliError(`no stack ${stackName} in region ${region}; list them with retryproof receivers --region ${region}`, { cause: err });
    throw err;
  }
  if (stack === undefined) throw new CliError(`no stack ${stackName} in region ${region}; list them with retryproof receivers --region ${region}`);
  const found = receiversIn(stack.StackName ?? stackName, stack.Outputs ?? []);
  if (found.length === 0) {
    throw new CliError(
      `stack ${stackName} in region ${region} has no retryproof receiver (no output holds a receiver descriptor): ` +
        `deploy it with this version of retryproof, or list receivers with retryproof receivers --region ${region}`,
    );
  }
  return found;
}

/** Every receiver of every stack in the region (DescribeStacks, page by page). */
export async function regionReceivers(cfn: CloudFormation): Promise<FoundReceiver[]> {
  const found: FoundReceiver[] = [];
  let token: string | undefined;
  do {
    const page = await cfn.send(new DescribeStacksCommand(token === undefined ? {} : { NextToken: token }));
    for (const stack of page.Stacks ?? []) found.push(...receiversIn(stack.StackName ?? '', stack.Outputs ?? []));
    token = page.NextToken;
  } while (token !== undefined && token !== '');
  return found.sort((a, b) => a.stackName.localeCompare(b.stackName) || a.descriptor.receiver.localeCompare(b.descriptor.receiver));
}

/**
 * The receiver `--receiver` names, or the stack's only one.
 * @throws UsageError when the stack has several and none is named (the message lists them), or the name is not one of them
 */
export function pickReceiver(found: readonly FoundReceiver[], stackName: string, wanted: string | undefined): FoundReceiver {
  const ids = found.map((f) => f.descriptor.receiver);
  if (wanted === undefined) {
    const [only] = found;
    if (found.length === 1 && only !== undefined) return only;
    throw new UsageError(`stack ${stackName} has ${found.length} receivers: pick one with ${ids.map((id) => `--receiver ${id}`).join(' or ')}`);
  }
  const hit = found.find((f) => f.descriptor.receiver === wanted);
  if (hit !== undefined) return hit;
  const near = nearest(wanted, ids);
  throw new UsageError(
    `--receiver ${wanted}: stack ${stackName} has no such receiver${near === undefined ? '' : ` (did you mean "${near}"?)`}; its receivers: ${ids.join(', ')}`,
  );
}

/**
 * The configuration the receiver runs: its reconciler's in the deployed template
 * (receiver-descriptor.ts, deployedConfigOf), resolved as the functions resolve it at cold start.
 * @throws CliError naming what is missing or wrong
 */
export async function receiverConfig(cfn: CloudFormation, found: FoundReceiver): Promise<ResolvedConfig> {
  const { stackName, descriptor } = found;
  const answer = await cfn.send(new GetTemplateCommand({ StackName: stackName }));
  let template: { Resources?: Record<string, ConfigResource> };
  try {
    template = JSON.parse(answer.TemplateBody ?? '') as typeof template;
  } catch (err) {
    throw new CliError(`the template of stack ${stackName} is not JSON (CDK deploys JSON): cannot read receiver ${descriptor.receiver}'s configuration`, { cause: err });
  }
  try {
    const deployed = deployedConfigOf(template.Resources?.[descriptor.configResource]);
    if (deployed !== undefined) return resolveConfig(deployed as RetryproofConfig);
  } catch (err) {
    throw new CliError(`receiver ${descriptor.receiver}'s deployed configuration does not resolve: ${(err as Error).message.split('\n')[0] ?? ''}`, { cause: err });
  }
  throw new CliError(
    `stack ${stackName}'s template has no configuration on ${descriptor.configResource}, the resource receiver ${descriptor.receiver}'s descriptor names: redeploy it`,
  );
}
