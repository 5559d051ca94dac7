import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * cdk-nag's way of writing a CloudFormation value flat (its flattenCfnReference), redone
 * here because the construct must not need cdk-nag at runtime: cdk-nag is the app's
 * (lib/retryproof-app.ts), not the construct's. test/cdk/cdk-nag.test.ts fails on any
 * acknowledgement whose id this writes differently from cdk-nag.
 */
function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  const fn = node as Record<string, unknown>;
  if (fn['Fn::Join'] !== undefined) {
    const [delimiter, items] = fn['Fn::Join'] as [string, unknown[]];
    return items.map(flatten).join(delimiter);
  }
  if (fn['Fn::Sub'] !== undefined) return flatten(fn['Fn::Sub']);
  if (fn['Fn::GetAtt'] !== undefined) {
    const [resource, attribute] = fn['Fn::GetAtt'] as [unknown, unknown];
    return `<${flatten(resource)}.${flatten(attribute)}>`;
  }
  if (fn['Fn::ImportValue'] !== undefined) return flatten(fn['Fn::ImportValue']);
  if (fn.Ref !== undefined) return `<${flatten(fn.Ref)}>`;
  return JSON.stringify(node);
}

/**
 * How cdk-nag writes a value (usually an ARN) in a finding id, e.g. `<EventsTable4B7491D3.Arn>`
 * or `arn:<AWS::Partition>:secretsmanager:...`. Acknowledging `AwsSolutions-IAM5[Resource::...]`
 * needs this exact text; computed here, it cannot go stale as a logical id typed by hand can.
 */
export function nagResource(scope: IConstruct, value: string): string {
  return flatten(Stack.of(scope).resolve(value));
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
