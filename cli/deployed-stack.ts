/**
 * Finds a deployed retryproof stack's table, queue and DLQ from CloudFormation: the
 * queues from the stack's outputs (QueueUrl, DlqUrl, ApiUrl), the tables from its
 * resources by the logical ids the stack gives them (`Events/Table`, `Ledger/Table`),
 * since the stack has no table outputs. The parsing is pure, so it is tested without AWS.
 */
import { CloudFormationClient, DescribeStackResourcesCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import type { Output, StackResource } from '@aws-sdk/client-cloudformation';
import { CliError, UsageError } from './errors.ts';

export interface DeployedStack {
  readonly stackName: string;
  readonly apiUrl: string | undefined;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly eventsTable: string;
  /** Absent when the demo is off. */
  readonly ledgerTable: string | undefined;
}

export const STACK_OUTPUTS = { apiUrl: 'ApiUrl', queueUrl: 'QueueUrl', dlqUrl: 'DlqUrl' } as const;

/**
 * The logical id prefixes CDK derives from the construct paths `Events/Table` and
 * `Ledger/Table` (an 8-hex-digit hash follows). TableV2 deploys as a GlobalTable.
 */
export const TABLE_LOGICAL_ID_PREFIXES = { eventsTable: 'EventsTable', ledgerTable: 'LedgerTable' } as const;
const TABLE_TYPES: ReadonlySet<string> = new Set(['AWS::DynamoDB::GlobalTable', 'AWS::DynamoDB::Table']);

function tableByPrefix(resources: readonly StackResource[], prefix: string): string | undefined {
  const pattern = new RegExp(`^${prefix}[0-9A-F]{8}$`);
  const found = resources.filter(
    (r) => r.LogicalResourceId !== undefined && pattern.test(r.LogicalResourceId) && TABLE_TYPES.has(r.ResourceType ?? ''),
  );
  if (found.length > 1) {
    throw new CliError(`the stack has ${found.length} tables named ${prefix}*; expected one`);
  }
  return found[0]?.PhysicalResourceId;
}

/**
 * Reads the stack's outputs and resources.
 * @throws CliError naming what is missing, so a wrong stack name or an old stack is plain
 */
export function parseDeployedStack(
  stackName: string,
  outputs: readonly Output[],
  resources: readonly StackResource[],
): DeployedStack {
  const output = (key: string): string | undefined => outputs.find((o) => o.OutputKey === key)?.OutputValue;
  const queueUrl = output(STACK_OUTPUTS.queueUrl);
  const dlqUrl = output(STACK_OUTPUTS.dlqUrl);
  const missing = [
    ...(queueUrl === undefined ? [STACK_OUTPUTS.queueUrl] : []),
    ...(dlqUrl === undefined ? [STACK_OUTPUTS.dlqUrl] : []),
  ];
  if (queueUrl === undefined || dlqUrl === undefined) {
    throw new CliError(`stack ${stackName} has no output ${missing.join(' or ')}: is it a retryproof stack?`);
  }
  const eventsTable = tableByPrefix(resources, TABLE_LOGICAL_ID_PREFIXES.eventsTable);
  if (eventsTable === undefined) {
    throw new CliError(`stack ${stackName} has no events table (a resource ${TABLE_LOGICAL_ID_PREFIXES.eventsTable}XXXXXXXX): is it a retryproof stack?`);
  }
  return {
    stackName,
    apiUrl: output(STACK_OUTPUTS.apiUrl),
    queueUrl,
    dlqUrl,
    eventsTable,
    ledgerTable: tableByPrefix(resources, TABLE_LOGICAL_ID_PREFIXES.ledgerTable),
  };
}

/**
 * The region a deployed stack's clients use: `--region`, else the SDK's own chain
 * (AWS_REGION, then the region of AWS_PROFILE's profile in ~/.aws/config). Resolved before
 * any call, so a missing region is one line saying what to set, and no request is made.
 * @throws UsageError when no region is set anywhere
 */
export async function deployedRegion(stackName: string, region: string | undefined): Promise<string> {
  if (region !== undefined) return region;
  const client = new CloudFormationClient({});
  try {
    return await client.config.region();
  } catch (err) {
    throw new UsageError(
      `no AWS region for stack ${stackName}: pass --region R, or set AWS_REGION (or a region in the profile AWS_PROFILE names)`,
      undefined,
      { cause: err },
    );
  } finally {
    client.destroy();
  }
}

/** The SDK's failure as one line saying what to do, for the failures an operator meets first. */
function describeFailure(stackName: string, err: Error): string {
  if (err.name === 'CredentialsProviderError') {
    return `no AWS credentials to read stack ${stackName}: set AWS_PROFILE (after aws sso login or aws configure), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`;
  }
  if (err.name === 'ExpiredTokenException' || err.name === 'TokenRefreshRequired') {
    return `the AWS session has expired: log in again (aws sso login), then retry`;
  }
  if (err.name === 'AccessDenied' || err.name === 'AccessDeniedException') {
    return `AWS refused to describe stack ${stackName} (${err.message.split('\n')[0] ?? ''}): the role needs cloudformation:DescribeStacks and DescribeStackResources`;
  }
  return `could not describe stack ${stackName}: ${err.name}: ${err.message.split('\n')[0] ?? ''}`;
}

/** Describes the stack on AWS, in `region`; the credentials come from the usual chain. */
export async function describeDeployedStack(stackName: string, region: string): Promise<DeployedStack> {
  const client = new CloudFormationClient({ region });
  try {
    const stacks = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const stack = stacks.Stacks?.[0];
    if (stack === undefined) throw new CliError(`stack ${stackName} was not found in ${region}: check the name (and --region)`);
    const resources = await client.send(new DescribeStackResourcesCommand({ StackName: stackName }));
    return parseDeployedStack(stackName, stack.Outputs ?? [], resources.StackResources ?? []);
  } catch (err) {
    if (err instanceof CliError) throw err;
    const e = err as Error;
    if (e.name === 'ValidationError') {
      throw new CliError(`stack ${stackName} was not found in ${region}: check the name (and --region); AWS said: ${e.message}`, { cause: err });
    }
    throw new CliError(describeFailure(stackName, e), { cause: err });
  } finally {
    client.destroy();
  }
}
