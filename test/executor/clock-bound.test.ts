/**
 * The deployment's clock bound (maxClockSkewSeconds) reaches every comparison of another
 * machine's instant with our clock: a lease is taken over twice the bound after its end, not
 * the default's. On DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { ANSWER_MARGIN_MS, answerMarginMsFor } from '../../lambdas/ingest/ingest-delivery.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { toRecordItem } from '../../lambdas/store/record-item.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { sampleRecord } from '../support/event-records.ts';

const table = (): string => inject('eventsTable');

/** A record another worker leased, its lease over `overMs` ago by our clock. */
async function leasedRecord(overMs: number) {
  const client = localDynamoClient(inject('dynamoEndpoint'));
  const key = `k-${randomUUID()}`;
  const now = Date.now();
  const record = sampleRecord('clock-bound', key, now - 60_000, { status: 'EXECUTING', attempts: 1 });
  await documentClient(client).send(
    new PutCommand({ TableName: table(), Item: { ...toRecordItem(record), leaseUntil: now - overMs, leaseToken: 'other' } }),
  );
  const take = (skewSeconds?: number) =>
    new DynamoDbExecutionStore(client, table(), skewSeconds).acquireLease({
      route: 'clock-bound',
      key,
      receivedAt: record.receivedAt,
      nowMs: now,
      leaseMs: 30_000,
      token: 'ours',
      maxAttempts: 5,
    });
  return { take };
}

describe('the clock bound of a deployment', () => {
  it('takes over a lease 3 s past its end under a 1 s bound, and not under the default 5 s', async () => {
    // Prepare
    const r = await leasedRecord(3_000);
    // Act
    const underDefault = await r.take();
    const underOneSecond = await r.take(1);
    // Assess
    expect(underDefault.kind).toBe('locked');
    expect(underOneSecond.kind).toBe('leased');
  });

  it('never takes over a lease 15 s past its end under a 10 s bound', async () => {
    const r = await leasedRecord(15_000);
    expect((await r.take(10)).kind).toBe('locked');
  });

  it("sizes the answer margin by it: twice the bound and the ingest's whole life", () => {
    expect(answerMarginMsFor(resolveConfig({ routes: [route()], maxClockSkewSeconds: 10 }).clockSkewSeconds)).toBe(24_000);
    expect(ANSWER_MARGIN_MS).toBe(14_000);
  });
});

function route() {
  return { name: 'stripe', signature: { scheme: 'stripe' as const }, secretName: 's', actionTimeSeconds: 10, action: 'payout' };
}
