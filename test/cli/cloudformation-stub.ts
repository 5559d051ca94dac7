/**
 * A CloudFormation client stub that answers DescribeStacks, GetTemplate and DescribeStackResource from really
 * synthesized templates. There is no CloudFormation emulator, so this is the stand-in: the
 * templates are what `cdk synth` writes (aws-cdk-lib in the test), and each output value's
 * Ref, Fn::GetAtt and Fn::Join is resolved to a plausible physical value, the way
 * CloudFormation resolves them on deploy. Errors are thrown as the SDK throws them.
 */
import { CloudFormationServiceException, DescribeStackResourceCommand, DescribeStacksCommand, GetTemplateCommand } from '@aws-sdk/client-cloudformation';
import type {
  CloudFormationClient,
  DescribeStackResourceCommandOutput,
  DescribeStacksCommandOutput,
  GetTemplateCommandOutput,
  Stack,
} from '@aws-sdk/client-cloudformation';
import { Stack as CdkStack, Token } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { WebhookReceiver } from '../../lib/webhook-receiver.ts';

export const ACCOUNT = '111111111111';

interface CfnTemplate {
  readonly Resources: Record<string, { Type: string }>;
  readonly Outputs?: Record<string, { Value: unknown }>;
}

export interface DeployedStack {
  readonly name: string;
  readonly region: string;
  readonly template: CfnTemplate;
  /** Physical values by logical id, overriding the made-up ones (a table that exists in DynamoDB Local...). */
  readonly physical?: Readonly<Record<string, string>>;
}

/**
 * The template `cdk synth` writes for the stack, deployed in its region (`region` for an
 * environment-agnostic stack, such as the app's own, whose region is AWS::Region).
 */
export function deployedStack(stack: CdkStack, physical: Readonly<Record<string, string>> = {}, region = 'eu-west-1'): DeployedStack {
  return { name: stack.stackName, region: Token.isUnresolved(stack.region) ? region : stack.region, template: Template.fromStack(stack).toJSON() as CfnTemplate, physical };
}

/** The logical ids of a receiver's queue, DLQ and events table in its stack. */
export function receiverIds(receiver: WebhookReceiver): { queue: string; dlq: string; table: string } {
  const stack = CdkStack.of(receiver);
  const id = (c: { node: { defaultChild?: unknown } }): string => stack.getLogicalId(c.node.defaultChild as CfnElement);
  return { queue: id(receiver.queue), dlq: id(receiver.deadLetterQueue), table: id(receiver.table) };
}

/** What CloudFormation would make of a Ref to this resource once deployed. */
function madeUp(stack: DeployedStack, id: string): string {
  const type = stack.template.Resources[id]?.Type ?? '';
  const suffix = id.slice(-8);
  if (type === 'AWS::SQS::Queue') return `https://sqs.${stack.region}.amazonaws.com/${ACCOUNT}/${stack.name}-${id}-${suffix}`;
  if (type === 'AWS::ApiGatewayV2::Api') return `a${suffix.toLowerCase()}`;
  return `${stack.name}-${id}-${suffix}`;
}

/** Resolves an output's value as CloudFormation does. */
export function resolveValue(stack: DeployedStack, value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === 'string') {
    const pseudo: Record<string, string> = {
      'AWS::Region': stack.region,
      'AWS::AccountId': ACCOUNT,
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::Partition': 'aws',
      'AWS::StackName': stack.name,
    };
    return pseudo[v.Ref] ?? stack.physical?.[v.Ref] ?? madeUp(stack, v.Ref);
  }
  if (Array.isArray(v['Fn::GetAtt'])) {
    const [id, attr] = v['Fn::GetAtt'] as [string, string];
    if (attr === 'Arn') return `arn:aws:${(stack.template.Resources[id]?.Type ?? 'x::y').split('::')[1]?.toLowerCase() ?? 'x'}:${stack.region}:${ACCOUNT}:${stack.name}-${id}`;
    if (attr === 'QueueUrl') return stack.physical?.[id] ?? madeUp(stack, id);
    if (attr === 'ApiEndpoint') return `https://${madeUp(stack, id)}.execute-api.${stack.region}.amazonaws.com`;
    return `${madeUp(stack, id)}.${attr}`;
  }
  if (Array.isArray(v['Fn::Join'])) {
    const [sep, parts] = v['Fn::Join'] as [string, unknown];
    return resolveList(stack, parts).join(sep);
  }
  if (Array.isArray(v['Fn::Select'])) {
    const [index, list] = v['Fn::Select'] as [number, unknown];
    return resolveList(stack, list)[index] ?? '';
  }
  throw new Error(`the stub cannot resolve ${JSON.stringify(value)}`);
}

function resolveList(stack: DeployedStack, value: unknown): string[] {
  const v = value as Record<string, unknown>;
  if (Array.isArray(v['Fn::Split'])) {
    const [sep, text] = v['Fn::Split'] as [string, unknown];
    return resolveValue(stack, text).split(sep);
  }
  if (Array.isArray(value)) return value.map((p) => resolveValue(stack, p));
  throw new Error(`the stub cannot resolve the list ${JSON.stringify(value)}`);
}

/** DescribeStacks' view of a deployed stack: its outputs resolved. */
export function describedStack(stack: DeployedStack): Stack {
  return {
    StackName: stack.name,
    StackId: `arn:aws:cloudformation:${stack.region}:${ACCOUNT}:stack/${stack.name}/0f1e2d3c`,
    StackStatus: 'CREATE_COMPLETE',
    CreationTime: new Date(0),
    Outputs: Object.entries(stack.template.Outputs ?? {}).map(([key, o]) => ({ OutputKey: key, OutputValue: resolveValue(stack, o.Value) })),
  };
}

/** The error CloudFormation answers for a stack it does not have, as the SDK builds it (a ServiceException named by its code). */
export function noSuchStack(name: string): CloudFormationServiceException {
  return new CloudFormationServiceException({
    name: 'ValidationError',
    $fault: 'client',
    $metadata: { httpStatusCode: 400, requestId: 'b2544024-a0f9-4ae1-ab23-fc08e1ef4e9a', attempts: 1, totalRetryDelay: 0 },
    message: `Stack with id ${name} does not exist`,
  });
}

/** The error CloudFormation answers for a logical id the stack does not have (DescribeStackResource). */
export function noSuchResource(id: string, stackName: string): CloudFormationServiceException {
  return new CloudFormationServiceException({
    name: 'ValidationError',
    $fault: 'client',
    $metadata: { httpStatusCode: 400, requestId: 'c1e5f1d2-7a57-4c43-9d3b-2f1e0a9b8c7d', attempts: 1, totalRetryDelay: 0 },
    message: `Resource ${id} does not exist for stack ${stackName}`,
  });
}

export interface StubCalls {
  readonly commands: string[];
}

/**
 * A CloudFormation client over these stacks. DescribeStacks without a name pages one stack
 * at a time (NextToken), as a region with many stacks does. `fail`, when given, is thrown
 * instead of every answer.
 */
export function cloudFormationStub(stacks: readonly DeployedStack[], options: { fail?: () => Error; calls?: StubCalls } = {}): CloudFormationClient {
  const send = (command: unknown): Promise<DescribeStacksCommandOutput | GetTemplateCommandOutput | DescribeStackResourceCommandOutput> => {
    options.calls?.commands.push((command as { constructor: { name: string } }).constructor.name);
    if (options.fail !== undefined) return Promise.reject(options.fail());
    const $metadata = { httpStatusCode: 200 };
    if (command instanceof DescribeStacksCommand) {
      const name = command.input.StackName;
      if (name === undefined) {
        const at = Number(command.input.NextToken ?? '0');
        const page = stacks.slice(at, at + 1).map(describedStack);
        return Promise.resolve({ $metadata, Stacks: page, ...(at + 1 < stacks.length ? { NextToken: String(at + 1) } : {}) });
      }
      const found = stacks.find((s) => s.name === name);
      return found === undefined ? Promise.reject(noSuchStack(name)) : Promise.resolve({ $metadata, Stacks: [describedStack(found)] });
    }
    if (command instanceof GetTemplateCommand) {
      const found = stacks.find((s) => s.name === command.input.StackName);
      if (found === undefined) return Promise.reject(noSuchStack(command.input.StackName ?? ''));
      return Promise.resolve({ $metadata, TemplateBody: JSON.stringify(found.template) });
    }
    if (command instanceof DescribeStackResourceCommand) {
      const found = stacks.find((s) => s.name === command.input.StackName);
      if (found === undefined) return Promise.reject(noSuchStack(command.input.StackName ?? ''));
      const id = command.input.LogicalResourceId ?? '';
      const resource = found.template.Resources[id];
      if (resource === undefined) return Promise.reject(noSuchResource(id, found.name));
      return Promise.resolve({
        $metadata,
        StackResourceDetail: {
          StackName: found.name,
          LogicalResourceId: id,
          PhysicalResourceId: resolveValue(found, { Ref: id }),
          ResourceType: resource.Type,
          ResourceStatus: 'CREATE_COMPLETE',
          LastUpdatedTimestamp: new Date(0),
        },
      });
    }
    return Promise.reject(new Error(`the stub does not answer ${(command as { constructor: { name: string } }).constructor.name}`));
  };
  return { send, destroy: () => undefined, config: {} } as unknown as CloudFormationClient;
}
