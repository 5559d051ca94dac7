/**
 * Stages: one configuration deployed twice in one account and Region (`cdk deploy -c stage=dev`,
 * `-c stage=prod`) shares no physical name, route secrets included, and each stage's stack has
 * a name of its own.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lambdas/config/resolve-config.ts';
import { RECEIVER_OUTPUT_DESCRIPTION } from '../../lambdas/config/receiver-descriptor.ts';
import { parseShippedConfig } from '../../lambdas/config/shipped-config.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import { config } from '../../retryproof.config.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, thrownBy } from './stack-fixture.ts';

/** Names CloudFormation fills in at deploy, written as text: a pseudo parameter stands for itself. */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const v = value as { Ref?: string; 'Fn::Join'?: [string, unknown[]] } | null;
  if (typeof v?.Ref === 'string' && v.Ref.startsWith('AWS::')) return `<${v.Ref}>`;
  if (v?.['Fn::Join'] !== undefined) {
    const parts = v['Fn::Join'][1].map(text);
    return parts.every((p) => p !== undefined) ? parts.join(v['Fn::Join'][0]) : undefined;
  }
  return undefined;
}

/** A property that names a resource in its account and Region (an index's or a metric's name does not). */
const NAME_KEY = /^(?:[A-Za-z]*Name|Name)$/;
const NOT_PHYSICAL = new Set(['DisplayName', 'MetricName', 'IndexName', 'AttributeName', 'StageName', 'PolicyName', 'GroupName', 'ScheduleGroupName']);

/** Every physical name a template sets, as `Type.Property = name`, route secrets (named by their custom resource) included. */
function physicalNames(template: Template): Map<string, string> {
  const names = new Map<string, string>();
  for (const [id, resource] of Object.entries(template.toJSON().Resources as Record<string, { Type: string; Properties?: Record<string, unknown> }>)) {
    for (const [key, value] of Object.entries(resource.Properties ?? {})) {
      if (!NAME_KEY.test(key) || NOT_PHYSICAL.has(key)) continue;
      const name = text(value);
      if (name !== undefined) names.set(name, `${resource.Type}.${key} (${id})`);
    }
    if (resource.Type === 'Custom::RetryproofRouteSecret') {
      names.set(resource.Properties?.SecretName as string, `route secret (${id})`);
    }
  }
  return names;
}

function stageApp(stage: string) {
  const built = createRetryproofApp(config, { context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING, stage } });
  return { built, template: Template.fromStack(built.stack) };
}

describe('two stages of the shipped configuration in one account and Region', () => {
  let dev: ReturnType<typeof stageApp>;
  let prod: ReturnType<typeof stageApp>;

  beforeAll(() => {
    dev = stageApp('dev');
    prod = stageApp('prod');
  });

  it('name their stacks after the stage', () => {
    expect(dev.built.stack.stackName).toBe('Retryproof-dev');
    expect(prod.built.stack.stackName).toBe('Retryproof-prod');
  });

  it('share no physical name: table, queue, alarms, dashboard, API, route secrets', () => {
    const a = physicalNames(dev.template);
    const b = physicalNames(prod.template);
    // The walk found the named resources there are: the work queue, the alarms, the dashboard, the API, the secret.
    expect([...a.values()].some((where) => where.startsWith('AWS::SQS::Queue.QueueName'))).toBe(true);
    expect([...a.values()].some((where) => where.startsWith('AWS::CloudWatch::Alarm.AlarmName'))).toBe(true);
    expect([...a.values()].some((where) => where.startsWith('AWS::CloudWatch::Dashboard.DashboardName'))).toBe(true);
    expect([...a.values()].some((where) => where.startsWith('AWS::ApiGatewayV2::Api.Name'))).toBe(true);
    expect([...a.keys()]).toContain('Retryproof-dev/stripe');
    expect([...b.keys()]).toContain('Retryproof-prod/stripe');
    const shared = [...a.keys()].filter((name) => b.has(name)).map((name) => `${name}: ${a.get(name)}`);
    expect(shared).toEqual([]);
    // Every name starts with the stage's prefix, or (a name CDK generates, the schedule group's)
    // with the stage's stack name, dash left out; a bucket's with the prefix in lowercase, as S3
    // allows no capitals in a bucket's name.
    for (const name of a.keys()) expect(/^Retryproof-?dev\b/.test(name) || name.startsWith('retryproof-dev-bodies-'), name).toBe(true);
    expect([...a.keys()].some((name) => name.startsWith('retryproof-dev-bodies-'))).toBe(true);
  });

  it('name the prefix in the receiver descriptor the CLI discovers them by, and the secret the functions read', () => {
    // The descriptor is JSON joined with references; its literal parts hold the prefix.
    const outputs = dev.template.findOutputs('*');
    const descriptor = Object.values(outputs).find((o) => (o.Description as string).startsWith(RECEIVER_OUTPUT_DESCRIPTION));
    expect(JSON.stringify(descriptor?.Value)).toContain('\\"namePrefix\\":\\"Retryproof-dev\\"');
    expect(dev.built.stack.receiver.namePrefix).toBe('Retryproof-dev');
    const shipped = parseShippedConfig(dev.built.stack.receiver.ingestFunction.shippedConfig).resolved;
    expect(shipped.routes.map((r) => r.secretName)).toEqual(['Retryproof-dev/stripe']);
  });

  it('keep a namePrefix the configuration sets, the stage after it', () => {
    const built = createRetryproofApp({ ...config, namePrefix: 'shop' }, { context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } }, { stage: 'prod' });
    expect(built.stack.receiver.namePrefix).toBe('shop-prod');
    expect(built.stack.stackName).toBe('Retryproof-prod');
  });

  it('without a stage, is the one Retryproof stack with the prefix Retryproof, as before', () => {
    const built = createRetryproofApp(config, { context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } });
    expect(built.stack.stackName).toBe('Retryproof');
    expect(built.stack.receiver.namePrefix).toBe('Retryproof');
  });

  it('refuses a stage a stack name or a name prefix cannot hold, at synth', () => {
    const err = thrownBy(() => createRetryproofApp(config, { context: { ...NO_BUNDLING, stage: 'Prod_1' } }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe('stage must be 1 to 16 lowercase letters, digits or "-", starting with a letter, got "Prod_1"');
  });

});
