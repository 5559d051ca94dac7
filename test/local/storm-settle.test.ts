/**
 * The storm's settle wait on a Region with route queues: work waiting on a route's own queue
 * (here a rate-limited route's delayed wake-up) keeps the storm from calling the work settled.
 */
import { randomUUID } from 'node:crypto';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Target } from '../../cli/target.ts';
import { localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { waitForSettle } from '../../cli/storm/storm-verify.ts';

const sqs = localSqsClient(inject('sqsEndpoint'));
const dynamo = localDynamoClient(inject('dynamoEndpoint'));
afterAll(() => {
  sqs.destroy();
  dynamo.destroy();
});

async function queue(name: string): Promise<string> {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  if (out.QueueUrl === undefined) throw new Error(`fauxqs gave no URL for ${name}`);
  return out.QueueUrl;
}

describe("the storm's settle wait", () => {
  it("counts the messages on a route's own queue, delayed ones too, beside the shared queue's", async () => {
    // Prepare: an empty shared queue, and one delayed wake-up on the route `slow`'s own queue.
    const suffix = randomUUID().slice(0, 8);
    const queueUrl = await queue(`settle-work-${suffix}`);
    const slowUrl = await queue(`settle-work-slow-${suffix}`);
    await sqs.send(new SendMessageCommand({ QueueUrl: slowUrl, MessageBody: '{}', DelaySeconds: 60 }));
    const target = { sqs, dynamo, eventsTable: inject('eventsTable'), queueUrl, routeQueueUrls: { slow: slowUrl } } as unknown as Target;
    // Act
    const withRouteQueues = await waitForSettle(target, 'slow', [], { timeoutMs: 400, pollMs: 50 });
    const sharedOnly = await waitForSettle({ ...target, routeQueueUrls: {} }, 'slow', [], { timeoutMs: 400, pollMs: 50 });
    // Assess: not settled while the route queue holds its wake-up; the shared queue alone is empty.
    expect(withRouteQueues).toMatchObject({ settled: false, queued: 1 });
    expect(sharedOnly).toMatchObject({ settled: true, queued: 0 });
  });
});
