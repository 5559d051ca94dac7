/**
 * `retryproof inspect` shows work that waits for its route's rate limit: RECEIVED, no attempt
 * spent, and when its delayed wake-up comes back; and, once it ran, how often it waited. The
 * records are made by the real executor on DynamoDB Local; the command reads them as it reads a
 * stack's.
 */
import { describe, expect, it } from 'vitest';
import { formatTime } from '../../cli/output.ts';
import { executorHarness } from '../executor/executor-harness.ts';
import { inspectOnTestTable } from '../support/inspect-on-test-table.ts';

const run = inspectOnTestTable();
const inspect = (key: string, now: number, json = false): Promise<string> => run(key, { now, json });

describe('retryproof inspect on a rate-limited route', () => {
  it('shows waiting work with when it comes back and no attempt spent, then how often it waited', async () => {
    // Prepare: two deliveries at once on a route limited to 1 a minute: the second waits.
    const h = await executorHarness({ action: () => Promise.resolve({ ok: true }), rateLimit: { perMinute: 1 } });
    await h.run((await h.deliver({ amount: 1 })).message);
    const { key, message } = await h.deliver({ amount: 2 });
    expect((await h.run(message)).outcome).toBe('rate-limited');
    const back = Number((await h.record(key))?.lastEnqueuedAt);
    // Act
    const waiting = await inspect(key, h.now());
    const waitingJson = JSON.parse(await inspect(key, h.now(), true)) as { record: Record<string, unknown> };
    h.advance(60_000);
    expect((await h.run(h.sent[0]!)).outcome).toBe('completed');
    const done = await inspect(key, h.now());
    // Assess
    expect(waiting).toContain('status     RECEIVED');
    expect(waiting).toContain('attempts   0');
    expect(waiting).toContain(`waiting    for the route's rate limit, back ${formatTime(back)} (deferred 1 time; no attempt spent)`);
    expect(waitingJson.record).toMatchObject({ status: 'RECEIVED', attempts: 0, deferrals: 1, waitingUntil: back });
    expect(done).toContain('status     COMPLETED');
    expect(done).toContain("deferrals  1 (waited for the route's rate limit)");
    expect(done).not.toContain('waiting    ');
  });
});
