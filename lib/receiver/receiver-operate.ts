/**
 * What `retryproof console` calls against a deployed receiver, granted exactly: each action on
 * the resources it is called on, nothing on `*` and nothing by wildcard action. docs/console.md
 * lists the same table; test/cdk/console-least-privilege.test.ts holds the two and the console's SDK
 * imports to one another.
 */
import { ArnFormat } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { EVENTS_TABLE, LEDGER_TABLE } from '../../lambdas/store/table-schema.ts';
import { grantKeepBodies } from '../stateful/body-bucket.ts';

/** The receiver's resources the console reaches. */
export interface OperatedResources {
  readonly table: ITableV2;
  readonly queues: readonly IQueue[];
  readonly deadLetterQueue: IQueue;
  /** Every Region's bucket of large bodies: a body pointer may name another Region's. */
  readonly bodyBuckets: readonly IBucket[];
  /** The demo ledger table the descriptor names. @default - none */
  readonly ledgerTableName?: string;
}

/**
 * Grants `grantee` what the console calls, and what its CLI verbs call for the same screens and
 * actions (the table in docs/console.md, "The IAM actions it needs"): find the receiver and the
 * configuration it runs; read records, their execution log and lines; the overview's and the
 * deliveries' index reads; redrive, pause, resume and skip; the queues' depths; the DLQ's peek
 * and its move task (which receives, deletes and sends as the caller); a body on request, and a
 * re-sent large body kept alive first.
 */
export function grantOperate(scope: Stack, resources: OperatedResources, grantee: IGrantable): void {
  const { table, queues, deadLetterQueue, bodyBuckets, ledgerTableName } = resources;
  Grant.addToPrincipal({
    grantee,
    actions: ['cloudformation:DescribeStacks', 'cloudformation:GetTemplate'],
    resourceArns: [scope.formatArn({ service: 'cloudformation', resource: 'stack', resourceName: `${scope.stackName}/*`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME })],
  });
  Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    resourceArns: [table.tableArn],
  });
  Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:Query'],
    resourceArns: [EVENTS_TABLE.byTimeIndex.name, EVENTS_TABLE.failedIndex.name, EVENTS_TABLE.parkedIndex.name].map((index) => `${table.tableArn}/index/${index}`),
  });
  if (ledgerTableName !== undefined) {
    Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:Query'],
      resourceArns: [scope.formatArn({ service: 'dynamodb', resource: 'table', resourceName: `${ledgerTableName}/index/${LEDGER_TABLE.byHourIndex.name}` })],
    });
  }
  for (const queue of queues) queue.grant(grantee, 'sqs:GetQueueAttributes', 'sqs:SendMessage');
  deadLetterQueue.grant(
    grantee,
    'sqs:GetQueueAttributes',
    'sqs:ReceiveMessage',
    'sqs:ChangeMessageVisibility',
    'sqs:DeleteMessage',
    'sqs:StartMessageMoveTask',
    'sqs:ListMessageMoveTasks',
  );
  for (const bucket of bodyBuckets) grantKeepBodies(bucket, grantee);
}
