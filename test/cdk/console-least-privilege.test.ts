/**
 * Least privilege of `retryproof console` against a deployed receiver (issue 46, must-show 3).
 * Three lists must be one: the IAM actions of the AWS calls the console's code can send (the
 * SDK commands reachable from cli/commands/console.ts and the CLI's target resolution,
 * test/iam/sdk-imports.ts), the table in docs/console.md, and what `grantOperate` grants a role
 * of a synthesized consumer stack, action by action and resource by resource.
 */
import { readFileSync } from 'node:fs';
import type { CfnElement } from 'aws-cdk-lib';
import { App, ArnFormat, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AccountRootPrincipal, Role } from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { LedgerTable } from '../../lib/demo/ledger-table.ts';
import { WebhookReceiver } from '../../lib/webhook-receiver.ts';
import { isolationConfig } from './fixtures/isolation-config.ts';
import { sdkOperationsOf } from '../iam/sdk-imports.ts';
import { NO_BUNDLING, withOwnAction } from './stack-fixture.ts';

/** The console's code: its command, and the target resolution every verb shares (cli/target.ts). */
const ENTRIES = ['cli/commands/console.ts', 'cli/target.ts'];

/**
 * Operations the console's modules import and never send to a deployed receiver, each with why.
 * Modules under local/ are the local stack's (its set-up, `--local` only): none is listed here.
 */
const IMPORTED_NOT_SENT: Readonly<Record<string, string>> = {
  'dynamodb:DeleteItem': "DynamoDbEventStore's forgetReplay, the ingest's: the console reaches the module for its document client",
};

/** The IAM action each operation is authorised as, where it is not its own name. */
const ACTIONS_OF: Readonly<Record<string, readonly string[]>> = {
  'sqs:SendMessageBatch': ['sqs:SendMessage'],
  'sqs:DeleteMessageBatch': ['sqs:DeleteMessage'],
  'sqs:ChangeMessageVisibilityBatch': ['sqs:ChangeMessageVisibility'],
  // "To use HEAD, you must have the s3:GetObject permission" (Amazon S3 API Reference, HeadObject).
  's3:HeadObject': ['s3:GetObject'],
  // GetObject on the source, PutObject on the copy (Amazon S3 API Reference, CopyObject, Permissions).
  's3:CopyObject': ['s3:GetObject', 's3:PutObject'],
};

/**
 * Allowed beyond the calls: a move task receives and deletes the DLQ's messages as its caller
 * (SQS Developer Guide, "Configure queue permissions for dead-letter queue redrive"); ListBucket
 * makes a missing body 404 instead of 403 (Amazon S3 API Reference, GetObject, Permissions).
 */
const BEYOND_CALLS = ['sqs:DeleteMessage', 's3:ListBucket'];

/** The resources of docs/console.md's "on" column, by how a row's cell starts. */
const RESOURCES_OF_CELL: Readonly<Record<string, readonly string[]>> = {
  "the receiver's stack": ['stack'],
  'the events table': ['events table'],
  "the events table's indexes": ['events table/index/byTime', 'events table/index/failed', 'events table/index/parked'],
  "the ledger table's `byHour` index": ['ledger table/index/byHour'],
  'the work queues': ['work queue', 'route queue orders', 'route queue shipments'],
  'the DLQ': ['dlq'],
  '`bodies/*` of the body buckets': ['body bucket/bodies/*'],
  'the body buckets': ['body bucket'],
};

const SERVICES: Readonly<Record<string, string>> = { CloudFormation: 'cloudformation', DynamoDB: 'dynamodb', SQS: 'sqs', S3: 's3' };

/** The rows of docs/console.md's table of IAM actions, as `action on resource` lines. */
function documentedGrants(): string[] {
  const text = readFileSync(new URL('../../docs/console.md', import.meta.url), 'utf8');
  const section = text.split('## The IAM actions it needs against a deployed receiver')[1]?.split('\n## ')[0] ?? '';
  const rows = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| service') && !line.startsWith('|---'));
  expect(rows.length).toBeGreaterThan(5);
  return rows.flatMap((row) => {
    const [service = '', actions = '', on = ''] = row.split('|').slice(1).map((cell) => cell.trim());
    const prefix = SERVICES[service];
    const cell = Object.keys(RESOURCES_OF_CELL).filter((start) => on.startsWith(start)).sort((a, b) => b.length - a.length)[0];
    if (prefix === undefined || cell === undefined) throw new Error(`docs/console.md: a row this test cannot read: ${row}`);
    const names = [...actions.matchAll(/`(\w+)`/g)].map((m) => `${prefix}:${m[1] ?? ''}`);
    return names.flatMap((action) => (RESOURCES_OF_CELL[cell] ?? []).map((resource) => `${action} on ${resource}`));
  });
}

/** The IAM actions of every operation the console's code can send to a deployed receiver. */
function calledActions(): { actions: Set<string>; stale: string[] } {
  const imported = sdkOperationsOf(ENTRIES);
  const sent = [...imported].filter(([op, files]) => !files.every((f) => f.startsWith('local/')) && !Object.hasOwn(IMPORTED_NOT_SENT, op)).map(([op]) => op);
  return {
    actions: new Set(sent.flatMap((op) => ACTIONS_OF[op] ?? [op])),
    stale: Object.keys(IMPORTED_NOT_SENT).filter((op) => !imported.has(op)),
  };
}

/** A consumer's stack: a receiver with routes on queues of their own, the demo's ledger table, and an operator role given grantOperate. */
function consumerStack(): { lines: string[] } {
  const stack = new Stack(new App({ context: NO_BUNDLING }), 'Consumer', { env: { account: '123456789012', region: 'eu-west-1' } });
  const { demo: _demo, actions, ...props } = withOwnAction(isolationConfig);
  const receiver = new WebhookReceiver(stack, 'Webhooks', { ...props, actions: actions ?? {} });
  const ledger = new LedgerTable(stack, 'Ledger');
  receiver.describeLedgerTable(ledger.table.tableName);
  const operator = new Role(stack, 'Operator', { assumedBy: new AccountRootPrincipal() });
  receiver.grantOperate(operator);
  const id = (c: { node: { defaultChild?: unknown } }): string => stack.getLogicalId(c.node.defaultChild as CfnElement);
  const names = new Map<string, string>([
    [JSON.stringify({ 'Fn::GetAtt': [id(receiver.table), 'Arn'] }), 'events table'],
    [JSON.stringify({ 'Fn::GetAtt': [id(receiver.queue), 'Arn'] }), 'work queue'],
    ...[...receiver.routeQueues].map(([route, q]) => [JSON.stringify({ 'Fn::GetAtt': [id(q), 'Arn'] }), `route queue ${route}`] as const),
    [JSON.stringify({ 'Fn::GetAtt': [id(receiver.deadLetterQueue), 'Arn'] }), 'dlq'],
    [JSON.stringify({ 'Fn::GetAtt': [id(receiver.bodyBucket), 'Arn'] }), 'body bucket'],
    [JSON.stringify(stack.resolve(stack.formatArn({ service: 'cloudformation', resource: 'stack', resourceName: 'Consumer/*', arnFormat: ArnFormat.SLASH_RESOURCE_NAME }))), 'stack'],
    [JSON.stringify(stack.resolve(stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: `${ledger.table.tableName}/index/byHour` }))), 'ledger table/index/byHour'],
  ]);
  const nameOf = (resource: unknown): string => {
    const whole = names.get(JSON.stringify(resource));
    if (whole !== undefined) return whole;
    // `<arn>/index/byTime`, `<arn>/bodies/*`: a Fn::Join of the ARN and a suffix.
    const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    if (join?.[0] === '' && join[1].length === 2 && typeof join[1][1] === 'string') return `${nameOf(join[1][0])}${join[1][1]}`;
    return JSON.stringify(resource);
  };
  const roleRef = JSON.stringify([{ Ref: id(operator) }]);
  const statements = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
    .map((p) => (p as { Properties: { Roles: unknown[]; PolicyDocument: { Statement: { Effect: string; Action: string | string[]; Resource: unknown }[] } } }).Properties)
    .filter((p) => JSON.stringify(p.Roles) === roleRef)
    .flatMap((p) => p.PolicyDocument.Statement);
  for (const st of statements) expect(st.Effect).toBe('Allow');
  return { lines: statements.flatMap((st) => [st.Action].flat().flatMap((a) => [st.Resource].flat().map((r) => `${a} on ${nameOf(r)}`))) };
}

describe('the IAM actions of retryproof console', () => {
  let documented: string[];
  let granted: string[];

  beforeAll(() => {
    documented = documentedGrants();
    granted = consumerStack().lines;
  });

  it('lists in docs/console.md exactly the actions of the AWS calls its code can send, and those the calls imply', () => {
    const { actions, stale } = calledActions();
    for (const beyond of BEYOND_CALLS) actions.add(beyond);
    expect(stale).toEqual([]);
    expect([...new Set(documented.map((line) => line.split(' on ')[0]))].sort()).toEqual([...actions].sort());
  });

  it('grants with grantOperate exactly the table of docs/console.md, on exactly its resources', () => {
    expect([...new Set(granted)].sort()).toEqual([...new Set(documented)].sort());
  });

  it('grants no action on *, and no wildcard action', () => {
    expect(granted.filter((line) => line.endsWith(' on *') || line.split(' on ')[0]?.includes('*'))).toEqual([]);
  });
});
