/**
 * The fault middleware itself (test/support/ambiguous-dynamodb.ts): the SDK's own retry
 * re-sends an ambiguous write, and the re-sent write meets its own committed first attempt.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { ConditionalCheckFailedException, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { ambiguousDynamoDb, once } from '../support/ambiguous-dynamodb.ts';

function put(pk: string): PutItemCommand {
  return new PutItemCommand({
    TableName: inject('eventsTable'),
    Item: { pk: { S: pk }, sk: { S: 'TEST' } },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
}

describe('ambiguousDynamoDb', () => {
  it('commits the first attempt, loses its answer, and lets the SDK retry meet its own write', async () => {
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const attempts: number[] = [];
    const fault = once('PutItemCommand', 'commit-then-error');
    const restore = ambiguousDynamoDb(client, (name, input, attempt) => {
      attempts.push(attempt);
      return fault(name, input, attempt);
    });
    const pk = `ambiguous-${randomUUID()}`;

    const error = await client.send(put(pk)).catch((err: unknown) => err);
    restore();

    // The retry found the item its own first attempt wrote.
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect(attempts).toEqual([1, 2]);
    const item = await client.send(new GetItemCommand({ TableName: inject('eventsTable'), Key: { pk: { S: pk }, sk: { S: 'TEST' } } }));
    expect(item.Item?.pk?.S).toBe(pk);
  });

  it('retries an error before the commit and a throttle, up to the client\'s maxAttempts (4), then gives up', async () => {
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const seen: number[] = [];
    const restore = ambiguousDynamoDb(client, (name, _input, attempt) => {
      if (name !== 'PutItemCommand') return 'ok';
      seen.push(attempt);
      return attempt % 2 === 1 ? 'error-before-commit' : 'throttle';
    });
    const pk = `ambiguous-${randomUUID()}`;

    const error = await client.send(put(pk)).catch((err: unknown) => err);
    restore();

    expect(seen).toEqual([1, 2, 3, 4]);
    expect((error as Error).name).toBe('ProvisionedThroughputExceededException');
    const item = await client.send(new GetItemCommand({ TableName: inject('eventsTable'), Key: { pk: { S: pk }, sk: { S: 'TEST' } } }));
    expect(item.Item).toBeUndefined();
  });

  it("retries MRSC's ReplicatedWriteConflictException by the SDK's own decision: the write was not applied, and the retry applies it", async () => {
    // An MRSC global table refuses a write that met another Region's concurrent write of the
    // item; the SDK's error class carries $retryable, so its standard strategy retries it.
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const attempts: number[] = [];
    const fault = once('PutItemCommand', 'replicated-conflict');
    const restore = ambiguousDynamoDb(client, (name, input, attempt) => {
      if (name === 'PutItemCommand') attempts.push(attempt);
      return fault(name, input, attempt);
    });
    const pk = `conflict-${randomUUID()}`;

    await client.send(put(pk));
    restore();

    expect(fault.fired()).toBe(true);
    expect(attempts).toEqual([1, 2]);
    const item = await client.send(new GetItemCommand({ TableName: inject('eventsTable'), Key: { pk: { S: pk }, sk: { S: 'TEST' } } }));
    expect(item.Item?.pk?.S).toBe(pk);
  });

  it('puts the client back as it was', async () => {
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const restore = ambiguousDynamoDb(client, () => 'error-before-commit');
    restore();
    await expect(client.send(put(`ambiguous-${randomUUID()}`))).resolves.toBeDefined();
  });
});
