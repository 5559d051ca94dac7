/**
 * The multi-region example (examples/multi-region/) as a user's CDK app: one stack per replica
 * Region, one MRSC global events table across them, defined by the first Region's stack, and
 * in each Region its own receiver (API, queues, functions, schedule, alarms) on that table,
 * cdk-nag clean. And what the example's configuration may not become: MREC, or a Region in a key.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambdas/config/env.ts';
import { ConfigError } from '../../lambdas/config/resolve-config.ts';
import { MREC_REFUSAL } from '../../lambdas/config/regions.ts';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';
import { buildMultiRegionApp } from '../../examples/multi-region/multi-region-app.ts';
import { config } from '../../examples/multi-region/retryproof.config.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import type { RetryproofApp } from '../../lib/retryproof-app.ts';
import type { RetryproofStack } from '../../lib/retryproof-stack.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, ensuredSecretsOf, thrownBy } from '../cdk/stack-fixture.ts';

const REPLICAS = ['us-east-1', 'us-east-2'] as const;
const WITNESS = 'us-west-2';
const CONTEXT = { ...CDK_JSON_CONTEXT, ...NO_BUNDLING, ordersApiUrl: 'https://orders.example.test' };
const TABLE_NAME = 'Retryproof-events';

interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
}

describe('the multi-region example app', () => {
  let built: RetryproofApp;
  const templates = new Map<string, Template>();
  const templateOf = (region: string): Template => {
    const template = templates.get(region);
    if (template === undefined) throw new Error(`no stack in ${region}`);
    return template;
  };
  const stackOf = (region: string): RetryproofStack => {
    const stack = built.stacks.find((s) => s.region === region);
    if (stack === undefined) throw new Error(`no stack in ${region}`);
    return stack;
  };

  /** The logical id of the global table, in the us-east-1 stack. */
  const eventsTableId = (): string => {
    const stack = stackOf('us-east-1');
    return stack.getLogicalId(stack.receiver.table.node.defaultChild as CfnElement);
  };

  beforeAll(() => {
    // Prepare, Act: the app as app.ts builds it (cdk-nag included: a finding would throw here).
    built = buildMultiRegionApp({ context: CONTEXT });
    const assembly = built.app.synth();
    for (const stack of built.stacks) templates.set(stack.region, Template.fromJSON(assembly.getStackByName(stack.stackName).template as Record<string, unknown>));
  });

  it('synthesizes one stack per replica Region, named by it and in it, the second depending on the first', () => {
    expect(built.stacks.map((s) => [s.stackName, s.region])).toEqual([
      ['Retryproof-us-east-1', 'us-east-1'],
      ['Retryproof-us-east-2', 'us-east-2'],
    ]);
    expect(stackOf('us-east-2').dependencies.map((s) => s.stackName)).toEqual(['Retryproof-us-east-1']);
    expect(stackOf('us-east-1').dependencies).toEqual([]);
    // No stack in the witness Region: it holds no replica and runs no receiver.
    expect(built.stacks.some((s) => s.region === WITNESS)).toBe(false);
  });

  it('defines exactly one global table across the templates: MRSC, both replicas, the witness, no TTL, PITR and deletion protection on each replica', () => {
    const tables = [...templates.entries()].flatMap(([region, t]) =>
      Object.values(t.findResources('AWS::DynamoDB::GlobalTable')).map((r) => ({ region, props: (r as { Properties: Record<string, unknown> }).Properties })),
    );
    expect(tables).toHaveLength(1);
    const [{ region, props }] = tables as [{ region: string; props: Record<string, unknown> }];
    expect(region).toBe('us-east-1');
    expect(props.MultiRegionConsistency).toBe('STRONG');
    expect(props.TableName).toBe(TABLE_NAME);
    expect(props.GlobalTableWitnesses).toEqual([{ Region: WITNESS }]);
    expect(props).not.toHaveProperty('TimeToLiveSpecification');
    const replicas = props.Replicas as { Region: string; DeletionProtectionEnabled: boolean; PointInTimeRecoverySpecification: unknown }[];
    expect(replicas.map((r) => r.Region).sort()).toEqual([...REPLICAS]);
    for (const replica of replicas) {
      expect(replica.DeletionProtectionEnabled).toBe(true);
      expect(replica.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    }
    expect((props.GlobalSecondaryIndexes as { IndexName: string }[]).map((i) => i.IndexName)).toEqual([EVENTS_TABLE.byTimeIndex.name, EVENTS_TABLE.parkedIndex.name, EVENTS_TABLE.failedIndex.name]);
    expect(props.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
  });

  it.each(REPLICAS)('gives %s its own API, work queue and DLQ, executor on an SQS event source, reconciler schedule, alarms and dashboard', (region) => {
    const t = templateOf(region);
    t.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    t.resourceCountIs('AWS::SQS::Queue', 2);
    // Retryproof's three, and the function behind the route secret's custom resource where the secret is made.
    t.resourceCountIs('AWS::Lambda::Function', region === 'us-east-1' ? 4 : 3);
    t.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'Retryproof-work', RedrivePolicy: Match.anyValue() });
    const stack = stackOf(region);
    const executorId = stack.getLogicalId(stack.receiver.executorFunction.node.defaultChild as CfnElement);
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: executorId },
      EventSourceArn: { 'Fn::GetAtt': [stack.getLogicalId(stack.receiver.queue.node.defaultChild as CfnElement), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    t.resourceCountIs('AWS::Scheduler::Schedule', 1);
    expect(Object.keys(t.findResources('AWS::CloudWatch::Alarm')).length).toBeGreaterThan(5);
    t.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: `Retryproof-${region}` });
  });

  it("grants each Region's functions its own Region's replica: the table ARN, Query only on its two indexes", () => {
    const arnIn = (region: string) => (region === 'us-east-1' ? `{"Fn::GetAtt":["${eventsTableId()}","Arn"]}` : `:dynamodb:${region}:`);
    for (const region of REPLICAS) {
      const stack = stackOf(region);
      const statements = Object.values(templateOf(region).findResources('AWS::IAM::Policy')).flatMap(
        (p) => (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument.Statement,
      );
      const onTable = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
      expect(onTable.length).toBeGreaterThan(0);
      for (const statement of onTable) {
        const resource = JSON.stringify(statement.Resource);
        expect(resource).toContain(arnIn(region));
        if (region !== 'us-east-1') expect(resource).toContain(`:table/${TABLE_NAME}`);
        expect(resource).not.toContain('index/*');
        // Another Region's replica is never named.
        for (const other of REPLICAS.filter((r) => r !== region)) expect(resource).not.toContain(`:dynamodb:${other}:`);
      }
      // Query on the two indexes (the reconciler's window, parked and stranded records), and on
      // the table only beside DeleteItem: the expiry sweep's partition reads and deletes, which a
      // deployment of several Regions needs because an MRSC table has no TTL.
      const query = onTable.filter((s) => [s.Action].flat().includes('dynamodb:Query'));
      const onIndexes = query.filter((s) => JSON.stringify(s.Resource).includes('/index/'));
      expect(onIndexes.map((s) => JSON.stringify(s.Resource))).toEqual([
        expect.stringMatching(new RegExp(`/index/${EVENTS_TABLE.byTimeIndex.name}".*/index/${EVENTS_TABLE.parkedIndex.name}"`)),
      ]);
      const sweep = query.filter((s) => !onIndexes.includes(s));
      // (CDK merges the reconciler's item actions on the table into one statement.)
      expect(sweep).toHaveLength(1);
      expect([sweep[0]?.Action].flat()).toEqual(expect.arrayContaining(['dynamodb:DeleteItem', 'dynamodb:Query']));
      expect(onTable.filter((s) => [s.Action].flat().includes('dynamodb:DeleteItem'))).toEqual(sweep);
      expect(stack.receiver.placement?.owner).toBe(region === 'us-east-1');
    }
  });

  it("points every function of every Region at the one table's name", () => {
    for (const region of REPLICAS) {
      const functions = Object.values(templateOf(region).findResources('AWS::Lambda::Function')) as { Properties: { Environment?: { Variables: Record<string, unknown> } } }[];
      // Retryproof's functions; the secret's provider reads no table.
      for (const fn of functions.filter((f) => f.Properties.Environment?.Variables[ENV.queueUrl] !== undefined)) {
        // The table's Ref where it is defined (its name), the name itself elsewhere.
        const expected = region === 'us-east-1' ? { Ref: eventsTableId() } : TABLE_NAME;
        expect(fn.Properties.Environment?.Variables[ENV.eventsTable], region).toEqual(expected);
      }
    }
  });

  it('creates the route secret once, in us-east-1, replicated to us-east-2, whose ingest reads its replica there', () => {
    // Ensured by name at deploy (lib/stateful/route-secrets.ts), with its replica asked for on create.
    const ensured = [...ensuredSecretsOf(templateOf('us-east-1')).values()];
    expect(ensured).toEqual([expect.objectContaining({ SecretName: 'Retryproof/multi-region/orders', ReplicaRegions: ['us-east-2'] })]);
    // The function behind it may add a replica to a secret it adopts, not only to one it creates.
    templateOf('us-east-1').hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: Match.arrayWith(['secretsmanager:DescribeSecret', 'secretsmanager:ReplicateSecretToRegions']) })]) },
    });
    templateOf('us-east-2').resourceCountIs('Custom::RetryproofRouteSecret', 0);
    templateOf('us-east-2').resourceCountIs('AWS::SecretsManager::Secret', 0);
    templateOf('us-east-2').hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'secretsmanager:GetSecretValue',
            Resource: { 'Fn::Join': ['', Match.arrayWith([':secretsmanager:us-east-2:', ':secret:Retryproof/multi-region/orders-??????'])] },
          }),
        ]),
      },
    });
  });

  it.each(REPLICAS)('outputs ApiUrl, QueueUrl, DlqUrl, AlarmTopicArn, DlqConsoleUrl and Region in %s', (region) => {
    const outputs = templateOf(region).findOutputs('*');
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['ApiUrl', 'QueueUrl', 'DlqUrl', 'AlarmTopicArn', 'DlqConsoleUrl', 'Region', 'EventsTableName']));
    expect(outputs.Region?.Value).toBe(region);
  });

  it('runs cdk-nag on every Region stack: a finding nobody acknowledged fails synth', () => {
    // Prepare: the same app, plus a queue that allows plain HTTP (AwsSolutions-SQS4) in us-east-2.
    const app = buildMultiRegionApp({ context: CONTEXT });
    const second = app.stacks[1];
    if (second === undefined) throw new Error('no second stack');
    new Queue(second, 'Unacknowledged');
    // Act, Assess
    expect(() => app.app.synth()).toThrow(/AwsSolutions-SQS/);
  });
});

describe("the multi-region example's configuration", () => {
  const build = (changed: typeof config | Record<string, unknown>) => thrownBy(() => createRetryproofApp(changed as typeof config, { context: CONTEXT }));

  it('is refused at synth with MREC (consistency: eventual), for the reason that two Regions could both claim one key', () => {
    const err = build({ ...config, regions: { ...config.regions, consistency: 'eventual' } });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toContain(MREC_REFUSAL);
    expect(err.message).toMatch(/last writer wins/);
  });

  it('is refused at synth with a Region prefix in a key template, for the reason that it makes one event two keys', () => {
    const err = build({ ...config, routes: config.routes.map((r) => ({ ...r, key: 'us-east1_{body:/order}' })) });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/route "orders"/);
    expect(err.message).toMatch(/one event two keys/);
  });

  it('builds as given (the refusals above come from the change alone)', () => {
    expect(createRetryproofApp(config, { context: CONTEXT }).stacks).toHaveLength(2);
  });
});
