/**
 * `POST /_local/ledger`: the local stack's ledgers, read for `retryproof --local ledger` and
 * `inspect`. The ledgers here are a team's own modules (the Ledger contract is ours, the
 * implementation theirs), so an in-memory one is what a team could supply.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { Ledger, LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import { adminEndpoints } from '../../local/admin-endpoints.ts';
import type { AdminHandler } from '../../local/http-gateway.ts';

function memoryLedger(entries: readonly LedgerEntry[]): Ledger & { reads: number } {
  const ledger = {
    reads: 0,
    post: () => Promise.reject(new Error('not posted to in this test')),
    listWindow: (fromMs: number, toMs: number) => {
      ledger.reads++;
      return Promise.resolve(entries.filter((e) => e.postedAt >= fromMs && e.postedAt < toMs));
    },
    reverse: () => Promise.resolve('not-found' as const),
  };
  return ledger;
}

const entry = (entryId: string, postedAt: number): LedgerEntry => ({ entryId, route: 'orders', idempotencyKey: `k-${entryId}`, postedAt, status: 'posted' });

function ledgerCall(ledgers: ReadonlyMap<string, Ledger>): AdminHandler {
  const handler = adminEndpoints({
    region: 'local-1',
    restartExecutor: () => Promise.resolve({ abandonedBatches: 0 }),
    reconcileOnce: () => Promise.reject(new Error('not reconciled in this test')),
    ledgers,
    stuckAfterSeconds: 900,
    sqs: new SQSClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' }),
    queues: { queueUrl: 'unused', queueArn: 'unused', dlqUrl: 'unused', dlqArn: 'unused' },
    executor: () => ({ batches: 0, messages: 0, batchesInFlight: 0 }) as never,
  }).get('POST /_local/ledger');
  if (handler === undefined) throw new Error('no POST /_local/ledger');
  return handler;
}

describe('POST /_local/ledger', () => {
  it('lists the window of every ledger once, however many actions share it', async () => {
    // Prepare: two actions share one ledger; a third has its own.
    const shared = memoryLedger([entry('a', 100), entry('b', 200), entry('late', 900)]);
    const own = memoryLedger([entry('c', 150)]);
    const call = ledgerCall(new Map([['placeOrder', shared], ['refundOrder', shared], ['notify', own]]));
    // Act
    const answer = await call({ fromMs: 0, toMs: 500 });
    // Assess
    expect(answer.status).toBe(200);
    const body = answer.body as { ledgers: number; entries: LedgerEntry[] };
    expect(body.ledgers).toBe(2);
    expect(body.entries.map((e) => e.entryId).sort()).toEqual(['a', 'b', 'c']);
    expect([shared.reads, own.reads]).toEqual([1, 1]);
  });

  it('says so when no action declares a ledger', async () => {
    // Act
    const answer = await ledgerCall(new Map())({ fromMs: 0, toMs: 500 });
    // Assess
    expect(answer).toEqual({ status: 200, body: { ledgers: 0, entries: [] } });
  });

  it.each([[undefined], [{}], [{ fromMs: 10 }], [{ fromMs: 'a', toMs: 5 }], [{ fromMs: 10, toMs: 5 }]])(
    'answers 400 with the reason for a window it cannot read: %j',
    async (body) => {
      // Prepare
      const ledger = memoryLedger([entry('a', 100)]);
      // Act
      const answer = await ledgerCall(new Map([['placeOrder', ledger]]))(body);
      // Assess
      expect(answer).toEqual({ status: 400, body: { error: 'fromMs and toMs are required: epoch milliseconds, fromMs <= toMs' } });
      expect(ledger.reads).toBe(0);
    },
  );
});
