import { CfnElement, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * How cdk-nag prints the `Arn` attribute of a resource in a finding id, e.g.
 * `<EventsTable4B7491D3.Arn>`. Acknowledging `AwsSolutions-IAM5[Resource::...]` needs
 * this exact text, and a logical id computed here cannot go stale as one typed by hand can.
 */
export function nagArnRef(resource: IConstruct): string {
  const cfn = resource.node.defaultChild;
  if (!(cfn instanceof CfnElement)) {
    throw new Error(`construct ${resource.node.path} has no cloudformation resource of its own`);
  }
  return `<${Stack.of(resource).getLogicalId(cfn)}.Arn>`;
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
