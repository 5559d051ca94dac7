/**
 * The bucket of large bodies (the S3 claim check) as the app deploys it: private, encrypted, TLS
 * only, its objects expiring by the same figure the functions renew them by, named so that every
 * Region finds every other's, and each function granted on `bodies/*` only what its code needs.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AccountRootPrincipal, Role } from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambdas/config/env.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import {
  MESSAGE_POINTER_COVER_SECONDS,
  bodyObjectLifeDays,
  bodyObjectName,
  bodyObjectPointer,
  longestTtlSeconds,
  parseBodyObjectPointer,
} from '../../lambdas/domain/body-object.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import type { RetryproofStack } from '../../lib/retryproof-stack.ts';
import { BODY_OBJECTS_KEY_PATTERN, BodyBucket, bodyBucketName } from '../../lib/stateful/body-bucket.ts';
import { WebhookReceiver } from '../../lib/webhook-receiver.ts';
import { config } from '../../retryproof.config.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, grantsOf, logicalIdOf, synthesize, thrownBy, withOwnAction } from './stack-fixture.ts';
import type { Grant, SynthesizedApp } from './stack-fixture.ts';

const FUNCTION_ROLES = { ingest: 'IngestRole', executor: 'ExecutorRole', reconciler: 'ReconcilerRole' } as const;
const line = (g: Grant): string => `${g.action} on ${g.resource}`;
const s3Lines = (built: SynthesizedApp, role: string): string[] => grantsOf(built, role).filter((g) => g.action.startsWith('s3:')).map(line).sort();

describe('the body bucket of the app built from retryproof.config.ts', () => {
  let built: SynthesizedApp;
  let bucket: string;
  let properties: Record<string, unknown>;

  beforeAll(() => {
    // cdk-nag runs here: a finding nobody acknowledged (AwsSolutions-S1, -S10, -IAM5) would throw.
    built = synthesize(config);
    bucket = logicalIdOf(built, 'Bodies/Bucket');
    const resource = built.template.findResources('AWS::S3::Bucket')[bucket] as { Properties: Record<string, unknown>; DeletionPolicy: string; UpdateReplacePolicy: string };
    properties = resource.Properties;
  });

  it('is the one bucket of the stack, and is retained, as the events table whose records point to it is, unless its first deploy rolls back', () => {
    built.template.resourceCountIs('AWS::S3::Bucket', 1);
    // RetainExceptOnCreate: a first deploy rolled back leaves no empty bucket to block the next one by its name.
    built.template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
    built.template.hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Retain' });
  });

  it('blocks every kind of public access and turns ACLs off', () => {
    expect(properties.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(properties.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
  });

  it('encrypts at rest with S3-managed keys, and keeps no versions that would outlive the lifecycle', () => {
    expect(properties.BucketEncryption).toEqual({ ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] });
    expect(properties).not.toHaveProperty('VersioningConfiguration');
  });

  it('refuses every request not made over TLS (aws:SecureTransport false), on the bucket and its objects', () => {
    built.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucket },
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Deny',
            Principal: { AWS: '*' },
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            Resource: [{ 'Fn::GetAtt': [bucket, 'Arn'] }, { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, '/*']] }],
          },
        ]),
      },
    });
  });

  it('expires each object bodyObjectLifeDays of the longest TTL after its last write, and aborts an unfinished upload after a day', () => {
    const longest = longestTtlSeconds(resolveConfig(config).routes);
    const days = bodyObjectLifeDays(longest);
    // What body-object.ts promises of that figure: an object outlives the longest TTL and every
    // message that may still point to it (the pointer cover), so no record outlives its body.
    expect(days * 86_400).toBeGreaterThanOrEqual(longest + MESSAGE_POINTER_COVER_SECONDS);
    expect(properties.LifecycleConfiguration).toEqual({
      Rules: [{ Id: 'expire-bodies', Status: 'Enabled', ExpirationInDays: days, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }],
    });
    const construct = built.stack.receiver.node.findChild('Bodies');
    expect(construct instanceof BodyBucket ? construct.objectLifeDays : undefined).toBe(days);
  });

  it('follows the longest TTL of the routes: a route kept 40 days lengthens every object\'s life', () => {
    const longer: RetryproofConfig = {
      ...config,
      routes: [...config.routes, { ...config.routes[0]!, name: 'adyen', secretName: 'adyen', ttlSeconds: 40 * 86_400 }],
    };
    const days = bodyObjectLifeDays(longestTtlSeconds(resolveConfig(longer).routes));
    expect(days).toBeGreaterThan(bodyObjectLifeDays(longestTtlSeconds(resolveConfig(config).routes)));
    synthesize(longer).template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: days })] },
    });
  });

  it('is named by the prefix, the account and the Region, which CloudFormation fills in', () => {
    expect(properties.BucketName).toEqual({ 'Fn::Join': ['', ['retryproof-bodies-', { Ref: 'AWS::AccountId' }, '-', { Ref: 'AWS::Region' }]] });
  });

  it(`gives each of the three functions the bucket's name in ${ENV.bodyBucket}`, () => {
    const functions = built.template.findResources('AWS::Lambda::Function');
    for (const fn of ['Ingest', 'Executor', 'Reconciler']) {
      const variables = (functions[logicalIdOf(built, fn)] as { Properties: { Environment: { Variables: Record<string, unknown> } } }).Properties.Environment.Variables;
      expect(variables[ENV.bodyBucket], fn).toEqual({ Ref: bucket });
    }
  });

  it('lets the ingest put and check objects under bodies/ of its own bucket: no listing, nothing else', () => {
    expect(s3Lines(built, FUNCTION_ROLES.ingest)).toEqual([`s3:GetObject on ${bucket}/bodies/*`, `s3:PutObject on ${bucket}/bodies/*`]);
  });

  it.each(['executor', 'reconciler'] as const)('lets the %s read and renew objects under bodies/, and list the bucket so a missing object is a 404', (fn) => {
    expect(s3Lines(built, FUNCTION_ROLES[fn])).toEqual([`s3:GetObject on ${bucket}/bodies/*`, `s3:ListBucket on ${bucket}`, `s3:PutObject on ${bucket}/bodies/*`]);
  });

  it('lets nobody delete an object, and grants no S3 action by wildcard, to any role of the stack', () => {
    const policies = Object.values(built.template.findResources('AWS::IAM::Policy')) as { Properties: { PolicyDocument: { Statement: { Effect: string; Action: string | string[] }[] } } }[];
    const allowed = policies.flatMap((p) => p.Properties.PolicyDocument.Statement.filter((st) => st.Effect === 'Allow').flatMap((st) => [st.Action].flat()));
    expect(allowed.filter((a) => a.startsWith('s3:'))).not.toHaveLength(0);
    expect(allowed.filter((a) => a.startsWith('s3:Delete') || (a.startsWith('s3:') && a.includes('*')))).toEqual([]);
  });

  it('names it in the receiver descriptor, for the CLI', () => {
    const outputs = built.template.toJSON().Outputs as Record<string, { Value: { 'Fn::Join': [string, unknown[]] } }>;
    const parts = outputs.Receiver?.Value['Fn::Join'][1] ?? [];
    const at = parts.findIndex((p) => typeof p === 'string' && p.endsWith('"bodyBucket":"'));
    expect(at).toBeGreaterThan(-1);
    expect(parts[at + 1]).toEqual({ Ref: bucket });
  });
});

describe("the receiver's grants on its body bucket to people and their tools", () => {
  /** The S3 grants of a role `Operator` given `grant` of a receiver of its own stack. */
  const operatorS3 = (grant: (receiver: WebhookReceiver, operator: Role) => void): { lines: string[]; bucket: string } => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Tools');
    const { demo: _demo, actions, ...props } = withOwnAction(config);
    const receiver = new WebhookReceiver(stack, 'Orders', { ...props, actions: actions ?? {} });
    const operator = new Role(stack, 'Operator', { assumedBy: new AccountRootPrincipal() });
    grant(receiver, operator);
    const roleRef = JSON.stringify([{ Ref: stack.getLogicalId(operator.node.defaultChild as CfnElement) }]);
    const bucket = stack.getLogicalId(receiver.bodyBucket.node.defaultChild as CfnElement);
    const statements = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
      .map((p) => (p as { Properties: { Roles: unknown[]; PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } } }).Properties)
      .filter((p) => JSON.stringify(p.Roles) === roleRef)
      .flatMap((p) => p.PolicyDocument.Statement);
    const lines = statements.flatMap((st) =>
      [st.Action].flat().filter((a) => a.startsWith('s3:')).flatMap((a) => [st.Resource].flat().map((r) => `${a} on ${JSON.stringify(r).replaceAll(`{"Fn::GetAtt":["${bucket}","Arn"]}`, 'bucket')}`)),
    );
    return { lines: lines.sort(), bucket };
  };

  it('grantRedrive adds what a re-send of a large body does first: check and renew the object, and list the bucket', () => {
    expect(operatorS3((receiver, operator) => {
      receiver.grantRedrive(operator);
    }).lines).toEqual([
      's3:GetObject on {"Fn::Join":["",[bucket,"/bodies/*"]]}',
      's3:ListBucket on bucket',
      's3:PutObject on {"Fn::Join":["",[bucket,"/bodies/*"]]}',
    ]);
  });

  it('grantReadBodies lets a tool read bodies back and nothing more; grantReadRecords reads no body object', () => {
    expect(operatorS3((receiver, operator) => {
      receiver.grantReadBodies(operator);
    }).lines).toEqual([
      's3:GetObject on {"Fn::Join":["",[bucket,"/bodies/*"]]}',
      's3:ListBucket on bucket',
    ]);
    expect(operatorS3((receiver, operator) => {
      receiver.grantReadRecords(operator);
    }).lines).toEqual([]);
  });
});

describe('bodyBucketName', () => {
  it('writes <prefix, lowercase>-bodies-<account>-<region>, which a body pointer accepts', () => {
    const name = bodyBucketName('Retryproof-dev', '123456789012', 'eu-west-1');
    expect(name).toBe('retryproof-dev-bodies-123456789012-eu-west-1');
    // The functions parse their pointers by lambdas/domain/body-object.ts: the name must fit it.
    const object = bodyObjectName('stripe', 'evt_1', 'a'.repeat(64));
    expect(parseBodyObjectPointer(bodyObjectPointer(name, object))).toEqual({ bucket: name, name: object });
    expect(object.startsWith(BODY_OBJECTS_KEY_PATTERN.replace(/\*$/, ''))).toBe(true);
  });

  it('cuts a long prefix to 13 characters and 8 hex digits of its SHA-256: within 63 characters whatever the Region, and two prefixes alike at the start stay apart', () => {
    const a = bodyBucketName('Orders-Payments-Receiver-Production', '123456789012', 'ap-southeast-2');
    const b = bodyBucketName('Orders-Payments-Receiver-Staging', '123456789012', 'ap-southeast-2');
    expect(a).toMatch(/^orders-paymen-[0-9a-f]{8}-bodies-123456789012-ap-southeast-2$/);
    expect(a).not.toBe(b);
    expect(bodyBucketName('Orders-Payments-Receiver-Production', '123456789012', 'ap-southeast-2')).toBe(a);
    const longest = bodyBucketName('A'.repeat(40), '123456789012', 'x'.repeat(20));
    expect(longest.length).toBeLessThanOrEqual(63);
  });

  it('keeps the same name whether the Region is known at synth or CloudFormation fills it in', () => {
    const stack = new Stack(new App(), 'Agnostic');
    const agnostic = stack.resolve(bodyBucketName('Retryproof', stack.account, stack.region)) as { 'Fn::Join': [string, unknown[]] };
    expect(agnostic['Fn::Join'][1][0]).toBe('retryproof-bodies-');
    const long = stack.resolve(bodyBucketName('Orders-Payments-Receiver-Production', stack.account, stack.region)) as { 'Fn::Join': [string, unknown[]] };
    expect(long['Fn::Join'][1][0]).toBe(bodyBucketName('Orders-Payments-Receiver-Production', '123456789012', 'eu-west-1').replace('123456789012-eu-west-1', ''));
  });

  it('refuses a prefix that would start a name S3 reserves', () => {
    expect(thrownBy(() => bodyBucketName('xn--shop', '123456789012', 'eu-west-1')).message).toBe(
      'name prefix "xn--shop" would start the body bucket\'s name with "xn--", which s3 refuses: use another namePrefix',
    );
    expect(thrownBy(() => bodyBucketName('Sthree-orders', '123456789012', 'eu-west-1')).message).toMatch(/"sthree-"/);
  });
});

describe('the body buckets of an app in two Regions (and a witness, which holds no bucket)', () => {
  const REGIONS = ['eu-west-1', 'eu-west-2'] as const;
  const several: RetryproofConfig = { ...withOwnAction(config), regions: { replicas: [...REGIONS], witness: 'eu-west-3' } };
  let stacks: readonly RetryproofStack[];
  const templates = new Map<string, Template>();
  const stackIn = (region: string): RetryproofStack => {
    const stack = stacks.find((s) => s.region === region);
    if (stack === undefined) throw new Error(`no stack in ${region}`);
    return stack;
  };
  /** Every Allow of the role `role` of the receiver in `region`: `action on resource`, the resource as JSON. */
  const s3GrantsIn = (region: string, role: 'Ingest' | 'Executor' | 'Reconciler'): string[] => {
    const stack = stackIn(region);
    const roleId = stack.getLogicalId(stack.receiver.node.findChild(`${role}Role`).node.defaultChild as CfnElement);
    const policies = Object.values(templates.get(region)?.findResources('AWS::IAM::Policy') ?? {}) as {
      Properties: { Roles: unknown[]; PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } };
    }[];
    return policies
      .filter((p) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .flatMap((st) => [st.Action].flat().filter((a) => a.startsWith('s3:')).flatMap((a) => [st.Resource].flat().map((r) => `${a} on ${JSON.stringify(r)}`)))
      .sort();
  };
  /** Another Region's bucket, by name: its ARN as CloudFormation writes it in `region`'s template, with `suffix`. */
  const otherBucketArn = (of: string, suffix = ''): string =>
    JSON.stringify({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::retryproof-bodies-', { Ref: 'AWS::AccountId' }, `-${of}${suffix}`]] });
  const ownBucketArn = (region: string, suffix = ''): string => {
    const id = stackIn(region).getLogicalId(stackIn(region).receiver.bodyBucket.node.defaultChild as CfnElement);
    return suffix === '' ? JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] }) : JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [id, 'Arn'] }, suffix]] });
  };

  beforeAll(() => {
    // Prepare, Act: both Regions' stacks, cdk-nag included (an unacknowledged finding throws in synth).
    const built = createRetryproofApp(several, { context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } });
    const assembly = built.app.synth();
    stacks = built.stacks;
    for (const stack of stacks) templates.set(stack.region, Template.fromJSON(assembly.getStackByName(stack.stackName).template as Record<string, unknown>));
  });

  it.each(REGIONS)('gives %s a bucket of its own, named with its Region written out', (region) => {
    const template = templates.get(region);
    template?.resourceCountIs('AWS::S3::Bucket', 1);
    template?.hasResourceProperties('AWS::S3::Bucket', { BucketName: { 'Fn::Join': ['', ['retryproof-bodies-', { Ref: 'AWS::AccountId' }, `-${region}`]] } });
  });

  it.each(REGIONS)("lets %s's executor and reconciler read and renew the bodies of both Regions' buckets, and list both", (region) => {
    const [other = ''] = REGIONS.filter((r) => r !== region);
    const expected = [
      `s3:GetObject on ${ownBucketArn(region, '/bodies/*')}`,
      `s3:GetObject on ${otherBucketArn(other, '/bodies/*')}`,
      `s3:ListBucket on ${ownBucketArn(region)}`,
      `s3:ListBucket on ${otherBucketArn(other)}`,
      `s3:PutObject on ${ownBucketArn(region, '/bodies/*')}`,
      `s3:PutObject on ${otherBucketArn(other, '/bodies/*')}`,
    ].sort();
    expect(s3GrantsIn(region, 'Executor')).toEqual(expected);
    expect(s3GrantsIn(region, 'Reconciler')).toEqual(expected);
  });

  it.each(REGIONS)("keeps %s's ingest to its own Region's bucket", (region) => {
    expect(s3GrantsIn(region, 'Ingest')).toEqual([`s3:GetObject on ${ownBucketArn(region, '/bodies/*')}`, `s3:PutObject on ${ownBucketArn(region, '/bodies/*')}`]);
  });

  it.each(REGIONS)("holds %s's grants on any body bucket to one owned by the receiver's account (s3:ResourceAccount)", (region) => {
    // Prepare: every statement of the executor and the reconciler that names an S3 action.
    const stack = stackIn(region);
    const roleIds = ['ExecutorRole', 'ReconcilerRole'].map((id) => stack.getLogicalId(stack.receiver.node.findChild(id).node.defaultChild as CfnElement));
    const statements = (Object.values(templates.get(region)?.findResources('AWS::IAM::Policy') ?? {}) as {
      Properties: { Roles: unknown[]; PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown; Condition?: unknown }[] } };
    }[])
      .filter((p) => roleIds.some((id) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: id }])))
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .filter((st) => [st.Action].flat().some((a) => a.startsWith('s3:')));
    // Assess: the other Region's bucket is among them, and not one statement goes without the owner.
    expect(statements.some((st) => JSON.stringify(st.Resource).includes(`-${REGIONS.find((r) => r !== region)}`))).toBe(true);
    for (const st of statements) expect(st.Condition).toEqual({ StringEquals: { 's3:ResourceAccount': { Ref: 'AWS::AccountId' } } });
  });

  it('names, in each Region, the bucket the other Region creates', () => {
    const [first, second] = stacks as [RetryproofStack, RetryproofStack];
    expect(first.resolve(first.receiver.bodyBucket.bucketName)).toEqual({ Ref: first.getLogicalId(first.receiver.bodyBucket.node.defaultChild as CfnElement) });
    // What eu-west-1 grants on for eu-west-2 is the name eu-west-2's stack gives its bucket.
    const created = templates.get('eu-west-2')?.findResources('AWS::S3::Bucket') ?? {};
    const [createdName] = Object.values(created).map((r) => JSON.stringify((r as { Properties: { BucketName: unknown } }).Properties.BucketName));
    expect(createdName).toBe(JSON.stringify(second.resolve(bodyBucketName('Retryproof', second.account, 'eu-west-2'))));
  });
});
