import { describe, expect, it } from 'vitest';
import { ledgerEntries } from '../../lambdas/ledger/ledger.ts';
import { reconcilerFixture, recentWindow } from '../support/reconciler-fixture.ts';
import type { ReconcilerFixture } from '../support/reconciler-fixture.ts';

/**
 * Runs the crashAfterEffect scenario of layer 2: two posted entries for one key. The first
 * worker posts and dies; the executor's clock moves past its lease; the message comes back
 * after fauxqs' visibility timeout (drain waits for it) and a second worker posts again.
 */
async function doubleEffect(rf: ReconcilerFixture): Promise<string> {
  const { fx } = rf;
  const key = await fx.deliver({ amount: 77, simulate: { crashAfterEffect: true } });
  await fx.pollUntilReceived();
  const crashed = await fx.record(key);
  if (crashed?.status !== 'EXECUTING') throw new Error(`the first worker should have died holding the lease, found ${String(crashed?.status)}`);
  fx.clockOffsetMs += 20_000;
  await fx.drain();
  const done = await fx.record(key);
  if (done?.status !== 'COMPLETED' || done.attempts !== 2) {
    throw new Error(`the second worker should have completed on attempt 2, found ${String(done?.status)} after ${String(done?.attempts)}`);
  }
  return key;
}

describe('the reconciler and duplicate effects', () => {
  it('reverses the later of two posted entries, keeps the earliest, and logs the correction on the record', async () => {
    // Prepare
    const rf = await reconcilerFixture();
    const key = await doubleEffect(rf);
    const before = await rf.fx.ledger(key);
    // Act
    const report = await rf.reconciler().run(recentWindow(rf.fx));
    // Assess
    expect(before.map((e) => e.status)).toEqual(['posted', 'posted']);
    const after = (await rf.fx.ledger(key)).sort((a, b) => a.postedAt - b.postedAt);
    expect(after.map((e) => e.status)).toEqual(['posted', 'reversed']);
    expect(after[1]?.reversalId).toMatch(/^rev_[0-9a-f]{32}$/);
    expect(report.counts.reversed).toBe(1);
    expect(report.reversals).toEqual([
      expect.objectContaining({ key, entryId: after[1]?.entryId, keptEntryId: after[0]?.entryId }) as unknown,
    ]);
    const log = await rf.fx.log(key);
    expect(log.filter((e) => e.kind === 'reconciliation').map((e) => e.outcome)).toEqual(['duplicate-reversed']);
  });

  it('changes nothing on a second run', async () => {
    const rf = await reconcilerFixture();
    const key = await doubleEffect(rf);
    await rf.reconciler().run(recentWindow(rf.fx));
    const afterFirst = await rf.fx.ledger(key);
    const second = await rf.reconciler().run(recentWindow(rf.fx));
    expect(second.counts).toMatchObject({ reversed: 0, reenqueued: 0, missing: 0, orphans: 0 });
    expect(await rf.fx.ledger(key)).toEqual(afterFirst);
    expect((await rf.fx.log(key)).filter((e) => e.kind === 'reconciliation')).toHaveLength(1);
  });

  it('reverses exactly once when two runs race', async () => {
    const rf = await reconcilerFixture();
    const keys = [await doubleEffect(rf), await doubleEffect(rf)];
    const [a, b] = await Promise.all([rf.reconciler().run(recentWindow(rf.fx)), rf.reconciler().run(recentWindow(rf.fx))]);
    expect(a.counts.reversed + b.counts.reversed).toBe(2);
    for (const key of keys) {
      expect((await rf.fx.ledger(key)).map((e) => e.status).sort()).toEqual(['posted', 'reversed']);
    }
  });

  it('reports a COMPLETED record with no ledger entry and an entry with no record, and changes neither', async () => {
    const rf = await reconcilerFixture();
    const completedKey = await rf.fx.deliver({ amount: 5 });
    await rf.fx.drain();
    // The effect vanished from the ledger's view: delete it behind the reconciler's back.
    const [entry] = await rf.fx.ledger(completedKey);
    const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
    const { documentClient } = await import('../../lambdas/store/dynamodb-event-store.ts');
    await documentClient(rf.dynamo).send(new DeleteCommand({ TableName: rf.ledgerTable, Key: { entryId: entry?.entryId } }));
    const orphan = await rf.fx.ledgerClient.post({
      route: 'standard-webhooks',
      idempotencyKey: 'evt_nobody-sent-this',
      amount: 12,
      currency: 'EUR',
      postedAt: Date.now(),
    });
    const recordBefore = await rf.fx.record(completedKey);
    // Act
    const report = await rf.reconciler().run(recentWindow(rf.fx));
    // Assess
    expect(report.counts).toMatchObject({ missing: 1, orphans: 1, reversed: 0 });
    expect(report.needsAttention).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: completedKey, finding: 'missing-effect' }),
        expect.objectContaining({ key: 'evt_nobody-sent-this', finding: 'orphan-entry' }),
      ]) as unknown,
    );
    expect(await rf.fx.record(completedKey)).toEqual(recordBefore);
    const entries = await ledgerEntries(rf.fx.ledgerClient, Date.now() - 60_000, Date.now() + 60_000);
    expect(entries.find((e) => e.entryId === orphan.entryId)?.status).toBe('posted');
  });
});
