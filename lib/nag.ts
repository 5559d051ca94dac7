import { Stack } from 'aws-cdk-lib';
// cdk-nag's own flattener, so the ids built here are the ids it reports.
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference.js';
import type { IConstruct } from 'constructs';

/**
 * How cdk-nag writes a value (usually an ARN) in a finding id, e.g. `<EventsTable4B7491D3.Arn>`
 * or `arn:<AWS::Partition>:secretsmanager:...`. Acknowledging `AwsSolutions-IAM5[Resource::...]`
 * needs this exact text; computed here, it cannot go stale as a logical id typed by hand can.
 */
export function nagResource(scope: IConstruct, value: string): string {
  return flattenCfnReference(Stack.of(scope).resolve(value));
}

/**
 * The policy a role's grants land in. IAM findings belong to this construct, the
 * narrowest scope that holds them.
 * @throws Error when nothing was granted to the role yet
 */
export function defaultPolicyOf(role: IConstruct): IConstruct {
  const policy = role.node.tryFindChild('DefaultPolicy');
  if (policy === undefined) {
    throw new Error(`role ${role.node.path} has no default policy yet`);
  }
  return policy;
}
