import { beforeAll, describe, expect, it } from 'vitest';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { config } from '../../retryproof.config.ts';
import { grantsOf, logicalIdOf, synthesize, withOwnAction } from './stack-fixture.ts';
import type { Grant, SynthesizedApp } from './stack-fixture.ts';

/** Grants as `resource -> sorted actions`, so a whole role compares in one assertion. */
function byResource(grants: readonly Grant[]): Record<string, string[]> {
  const map: Record<string, Set<string>> = {};
  for (const { action, resource } of grants) (map[resource] ??= new Set()).add(action);
  return Object.fromEntries(Object.entries(map).map(([resource, actions]) => [resource, [...actions].sort()]));
}

const XRAY = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const FUNCTION_ROLES = ['IngestRole', 'ExecutorRole', 'ReconcilerRole'] as const;

describe('IAM of the retryproof functions', () => {
  let built: SynthesizedApp;
  const id = (path: string) => logicalIdOf(built, path);

  beforeAll(() => {
    built = synthesize(config);
  });

  it('allows no wildcard action (no * anywhere in an action), on any role in the stack', () => {
    const roles = Object.keys(built.template.findResources('AWS::IAM::Role'));
    expect(roles).toHaveLength(4);
    const actions = [...FUNCTION_ROLES, 'Reconcile/Role'].flatMap((role) => grantsOf(built, role).map((g) => g.action));
    expect(actions.length).toBeGreaterThan(20);
    expect(actions.filter((a) => a === '*' || a.endsWith(':*') || a.includes('*'))).toEqual([]);
  });

  it('attaches no managed policy to any function role', () => {
    for (const role of FUNCTION_ROLES) {
      const props = built.template.findResources('AWS::IAM::Role')[id(role)] as { Properties: Record<string, unknown> };
      expect(props.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('lets the ingest claim records, enqueue, read its routes secrets and publish alarms, and nothing else', () => {
    const events = id('Events/Table');
    expect(byResource(grantsOf(built, 'IngestRole'))).toEqual({
      '*': XRAY,
      [id('IngestLogs')]: LOGS,
      [events]: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      [`${events}/index/*`]: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      [id('Work/Queue')]: ['sqs:SendMessage'],
      [id('Secrets/demo')]: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
      [id('Secrets/stripe')]: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
      [id('Alarms/Topic')]: ['sns:Publish'],
      [id('Alarms/Key')]: ['kms:Decrypt', 'kms:GenerateDataKey'],
    });
  });

  it('lets the executor claim and complete records, consume the queue, dead-letter and post to the ledger, and nothing else', () => {
    const events = id('Events/Table');
    const ledger = id('Ledger/Table');
    expect(byResource(grantsOf(built, 'ExecutorRole'))).toEqual({
      '*': XRAY,
      [id('ExecutorLogs')]: LOGS,
      [events]: ['dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      [`${events}/index/*`]: ['dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      [id('Work/Queue')]: [
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ],
      [ledger]: ['dynamodb:PutItem'],
      [`${ledger}/index/*`]: ['dynamodb:PutItem'],
    });
  });

  it('lets the reconciler query the window, re-enqueue and reverse on the ledger, and nothing else: its report is in its log, not on the topic', () => {
    const events = id('Events/Table');
    const ledger = id('Ledger/Table');
    const items = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'];
    expect(byResource(grantsOf(built, 'ReconcilerRole'))).toEqual({
      '*': XRAY,
      [id('ReconcilerLogs')]: LOGS,
      [events]: items,
      [`${events}/index/*`]: items,
      [id('Work/Queue')]: ['sqs:SendMessage'],
      [ledger]: ['dynamodb:Query', 'dynamodb:UpdateItem'],
      [`${ledger}/index/*`]: ['dynamodb:Query', 'dynamodb:UpdateItem'],
    });
  });

  it('lets only the ingest publish to the alarm topic (the breaker\'s pause notice), and no function touch the DLQ', () => {
    const topic = id('Alarms/Topic');
    const dlq = id('Work/DeadLetterQueue');
    for (const role of FUNCTION_ROLES) {
      const grants = grantsOf(built, role);
      expect(grants.some((g) => g.resource === topic), role).toBe(role === 'IngestRole');
      expect(grants.filter((g) => g.resource === dlq), role).toEqual([]);
    }
  });

  it('gives no function the DLQ\'s URL, and the alarm topic\'s ARN to the ingest only', () => {
    const variables = (fn: string) =>
      (built.template.findResources('AWS::Lambda::Function')[id(fn)] as { Properties: { Environment: { Variables: Record<string, unknown> } } })
        .Properties.Environment.Variables;
    for (const fn of ['Ingest', 'Executor', 'Reconciler']) {
      expect(variables(fn), fn).not.toHaveProperty('RETRYPROOF_DLQ_URL');
      expect(Object.hasOwn(variables(fn), 'RETRYPROOF_ALARM_TOPIC_ARN'), fn).toBe(fn === 'Ingest');
    }
  });

  it('lets the schedule invoke the reconciler and nothing else', () => {
    const reconciler = id('Reconciler');
    expect(byResource(grantsOf(built, 'Reconcile/Role'))).toEqual({
      [reconciler]: ['lambda:InvokeFunction'],
      [`${reconciler}:*`]: ['lambda:InvokeFunction'],
    });
  });
});

describe('IAM of the retryproof functions with the demo off', () => {
  const noDemo: RetryproofConfig = withOwnAction(config);
  let built: SynthesizedApp;

  beforeAll(() => {
    built = synthesize(noDemo);
  });

  it('has no ledger table, so no function can reach one', () => {
    expect(built.stack.node.tryFindChild('Ledger')).toBeUndefined();
    expect(Object.keys(built.template.findResources('AWS::DynamoDB::GlobalTable'))).toEqual([logicalIdOf(built, 'Events/Table')]);
  });

  it('grants DynamoDB actions on the events table only', () => {
    const events = logicalIdOf(built, 'Events/Table');
    for (const role of FUNCTION_ROLES) {
      const tables = new Set(grantsOf(built, role).filter((g) => g.action.startsWith('dynamodb:')).map((g) => g.resource));
      expect([...tables].sort()).toEqual([events, `${events}/index/*`]);
    }
  });

  it('sets no ledger table variable on any function', () => {
    for (const fn of Object.values(built.template.findResources('AWS::Lambda::Function'))) {
      const variables = (fn as { Properties: { Environment: { Variables: Record<string, unknown> } } }).Properties.Environment.Variables;
      expect(variables).not.toHaveProperty('RETRYPROOF_LEDGER_TABLE');
    }
  });
});
