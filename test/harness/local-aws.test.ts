import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, inject, it } from 'vitest';
import { ConditionalCheckFailedException, DescribeTableCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';
import { localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';

describe('the test harness', () => {
  const ddb = localDynamoClient(inject('dynamoEndpoint'));
  const sqs = localSqsClient(inject('sqsEndpoint'));

  it('runs a real DynamoDB that enforces conditional writes and returns the old item', async () => {
    // Prepare
    const item = { pk: { S: `EVT#harness#${randomUUID()}` }, sk: { S: 'RECORD' }, n: { N: '1' } };
    const put = (n: string) =>
      ddb.send(
        new PutItemCommand({
          TableName: inject('eventsTable'),
          Item: { ...item, n: { N: n } },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    // Act
    await put('1');
    const second = await put('2').catch((err: unknown) => err);
    // Assess
    expect(second).toBeInstanceOf(ConditionalCheckFailedException);
    expect((second as ConditionalCheckFailedException).Item?.n).toEqual({ N: '1' });
  });

  it('creates the events table from the schema the CDK construct uses', async () => {
    const table = await ddb.send(new DescribeTableCommand({ TableName: inject('eventsTable') }));
    expect(table.Table?.KeySchema?.map((k) => k.AttributeName)).toEqual([EVENTS_TABLE.partitionKey, EVENTS_TABLE.sortKey]);
    expect(table.Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName).sort()).toEqual(
      [EVENTS_TABLE.byTimeIndex.name, EVENTS_TABLE.parkedIndex.name, EVENTS_TABLE.failedIndex.name].sort(),
    );
  });

  it('runs a real SQS emulator that sends, receives and deletes, with a redrive policy to the DLQ', async () => {
    // Prepare: the shared queue may hold other tests' messages, so look for ours by body.
    const body = JSON.stringify({ harness: randomUUID() });
    const queueUrl = inject('queueUrl');
    // Act
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    let found: { ReceiptHandle?: string } | undefined;
    for (let i = 0; i < 20 && found === undefined; i++) {
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30 }));
      found = received.Messages?.find((m) => m.Body === body);
    }
    expect(found?.ReceiptHandle).toBeDefined();
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: found?.ReceiptHandle }));
    const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }));
    // Assess
    expect(JSON.parse(attrs.Attributes?.RedrivePolicy ?? '{}')).toMatchObject({ maxReceiveCount: 5 });
  });
});

/** The IPv4 and IPv6 addresses with a socket listening on `port`, from the kernel's tables (Linux). */
async function listeningAddresses(port: number): Promise<string[]> {
  const found: string[] = [];
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const [file, v6] of [['/proc/net/tcp', false], ['/proc/net/tcp6', true]] as const) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (local === undefined || state !== '0A' || !local.endsWith(`:${hexPort}`)) continue;
      const hex = local.split(':')[0] ?? '';
      if (v6) found.push(/^0+$/.test(hex) ? '::' : hex === '00000000000000000000000001000000' ? '::1' : hex);
      else found.push(hex.match(/../g)?.reverse().map((b) => parseInt(b, 16)).join('.') ?? hex);
    }
  }
  return found;
}

describe('the local services', () => {
  it('listen on loopback only: fauxqs is moved off the 0.0.0.0 it asks for', async () => {
    // Prepare
    const { startLocalSqs } = await import('../../local/local-aws.ts');
    const sqs = await startLocalSqs();
    try {
      // Assess: the address the kernel lists for the listening socket (fauxqs' own report
      // names 127.0.0.1 even when it bound 0.0.0.0).
      expect(await listeningAddresses(sqs.server.port)).toEqual(['127.0.0.1']);
    } finally {
      await sqs.stop();
    }
  });
});
