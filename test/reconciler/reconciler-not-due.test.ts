import { describe, expect, inject, it } from 'vitest';
import { createReconciler } from '../../lambdas/reconciler/create-reconciler.ts';
import { reconcileScheduled } from '../../lambdas/reconciler/reconcile-cursor.ts';
import type { ScheduledRunOptions } from '../../lambdas/reconciler/reconcile-cursor.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { HOUR, T0, config, scene } from './window-scene.ts';
import type { Scene } from './window-scene.ts';

const MINUTE = 60_000;
/** Half the hourly schedule: what create-reconciler.ts gives a scheduled Lambda run. */
const MIN_GAP_MS = 30 * MINUTE;

/** 120 completed records over the last six hours. */
async function someRecords(s: Scene): Promise<void> {
  await s.writeRecords(Array.from({ length: 120 }, (_, i) => s.record('notify', `evt_${i}`, T0 - 6 * HOUR + i * 60_000, 'COMPLETED')));
}

/** A scheduled run's options at the scene's clock: the window [now - 24 h, now - 5 min]. */
function at(s: Scene, more: Partial<ScheduledRunOptions> = {}): ScheduledRunOptions {
  return { current: { fromMs: s.clock.t - 24 * HOUR, toMs: s.clock.t - 5 * MINUTE }, budgetMs: 1_000_000, stuckAfterMs: 900_000, maxReenqueue: 500, minGapMs: MIN_GAP_MS, ...more };
}

describe('a scheduled run after another finished its window', () => {
  it('does nothing 10 minutes after another run finished the window, and says why', async () => {
    // Prepare: one run (another Region's) finishes the window.
    const s = await scene();
    await someRecords(s);
    const first = await reconcileScheduled(s.deps(), at(s));
    expect(first.stoppedEarly).toBe(false);
    expect(first.counts.scanned).toBe(120);
    // Act: the next Region's run, 10 minutes later.
    s.clock.t += 10 * MINUTE;
    const second = await reconcileScheduled(s.deps(), at(s));
    // Assess: not due, nothing read; the cursor let go, so a run just after it is not refused as held.
    expect(second.notDue).toEqual({ reason: 'finished-recently', finishedToMs: first.window.toMs, minGapMs: MIN_GAP_MS });
    expect(second.skipped).toBeUndefined();
    expect(second.counts.scanned).toBe(0);
    const third = await reconcileScheduled(s.deps(), at(s, { minGapMs: undefined }));
    expect(third.skipped).toBeUndefined();
    expect(third.counts.scanned).toBe(120);
  }, 60_000);

  it('takes half the configured interval as the gap when the schedule runs it through createReconciler', async () => {
    // Prepare: a finished window; then the Lambda's run (skipIfFinishedRecently), 10 minutes later.
    const s = await scene();
    await someRecords(s);
    const reconciler = createReconciler({
      dynamo: localDynamoClient(inject('dynamoEndpoint')),
      eventsTable: s.eventsTable,
      queue: { send: () => Promise.resolve() },
      config,
      now: () => ++s.clock.t,
    });
    expect((await reconciler.run({ budgetMs: 1_000_000 })).counts.scanned).toBe(120);
    s.clock.t += 10 * MINUTE;
    // Act
    const scheduled = await reconciler.run({ budgetMs: 1_000_000, skipIfFinishedRecently: true });
    const byHand = await reconciler.run({ budgetMs: 1_000_000 });
    // Assess: the schedule's run is not due; a person's run (no skipIfFinishedRecently) reconciles.
    expect(scheduled.notDue?.minGapMs).toBe((config.reconciliation.everyMinutes * MINUTE) / 2);
    expect(scheduled.counts.scanned).toBe(0);
    expect(byHand.notDue).toBeUndefined();
    expect(byHand.counts.scanned).toBe(120);
  }, 60_000);

  it('runs 40 minutes after another run finished the window, the interval being 60', async () => {
    const s = await scene();
    await someRecords(s);
    const first = await reconcileScheduled(s.deps(), at(s));
    expect(first.stoppedEarly).toBe(false);
    // Act
    s.clock.t += 40 * MINUTE;
    const second = await reconcileScheduled(s.deps(), at(s));
    // Assess: the new window, read whole.
    expect(second.notDue).toBeUndefined();
    expect(second.window.toMs).toBeGreaterThan(first.window.toMs + 39 * MINUTE);
    expect(second.counts.scanned).toBe(120);
    expect(second.stoppedEarly).toBe(false);
  }, 60_000);

  it('continues an unfinished window at once, however little time has passed', async () => {
    // Prepare: a run that stops early (pages of 10, a budget of a few pages).
    const s = await scene({ pageLimit: 10 });
    await someRecords(s);
    const first = await reconcileScheduled(s.deps(), at(s, { budgetMs: 40 }));
    expect(first.stoppedEarly).toBe(true);
    // Act: the next run one minute later.
    s.clock.t += MINUTE;
    const second = await reconcileScheduled(s.deps(), at(s));
    // Assess: it continued the window where the first stopped.
    expect(second.notDue).toBeUndefined();
    expect(second.cursor).toMatchObject({ resumed: true, runs: 2 });
    expect(second.startedFrom).toEqual(first.stoppedAt);
    expect(first.counts.scanned + second.counts.scanned).toBe(120);
  }, 60_000);
});
