import { describe, expect, it } from 'vitest';
import { deadLetterRowOf, MOVED_BY_SQS } from '../../cli/operations/dead-letters.ts';

describe('deadLetterRowOf', () => {
  it('reads the context the executor put on its own DLQ message', () => {
    const row = deadLetterRowOf({
      MessageId: 'm1',
      Attributes: { SentTimestamp: '1795964334279' },
      Body: JSON.stringify({
        v: 1,
        route: 'demo',
        key: 'order-9',
        receivedAt: 1795964329729,
        attempts: 5,
        lastError: 'RetryableActionError: simulated',
        reason: 'retries exhausted after 5 attempts',
        body: '{"secret":"customer data"}',
      }),
    });
    expect(row).toEqual({
      route: 'demo',
      key: 'order-9',
      attempts: 5,
      lastError: 'RetryableActionError: simulated',
      receivedAt: 1795964329729,
      reason: 'retries exhausted after 5 attempts',
      messageId: 'm1',
      sentAt: 1795964334279,
    });
  });

  it('says the queue moved a work message that carries no reason', () => {
    const row = deadLetterRowOf({ MessageId: 'm2', Body: JSON.stringify({ v: 1, route: 'demo', key: 'k', receivedAt: 5 }) });
    expect(row).toMatchObject({ route: 'demo', key: 'k', attempts: null, lastError: null, reason: MOVED_BY_SQS, sentAt: null });
  });

  it('shows a message that is not JSON as unreadable, without throwing', () => {
    expect(deadLetterRowOf({ MessageId: 'm3', Body: 'not json' })).toMatchObject({ route: '', key: '', reason: 'unreadable message' });
  });
});
