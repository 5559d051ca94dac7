/** Time passing in the world: DynamoDB's TTL deletions, and quiet days and weeks in a long run. */
import { pollAny } from './actor-executor.ts';
import { moveTask, redriveCli } from './actor-operator.ts';
import { leapTo, runReconcilerHourly } from './actor-reconciler.ts';
import { checkCopiesOutliveRecords } from './checkers/copies-outlive-records.ts';
import { checkDlq } from './checkers/dlq-holds-only-dead-workers-work.ts';
import { BROWNOUT } from './run-shape.ts';
import { DAY, HOUR, ttlLagSeconds } from './sim-constants.ts';
import { runAllToEnd } from './stepping.ts';
import type { World } from './world.ts';
import { DeleteItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

// A sender retries a delivery until it gets a 2xx: a key none of whose copies was answered
// (each died, or got our 5xx) comes once more, as its sender's next retry.
/**
 * DynamoDB's TTL deletion, at a seeded moment: an item past its expiry is deleted only
 * later, up to 48 hours late ("DynamoDB typically deletes expired items within two days of
 * expiration. ... Items that have expired and not been deleted will still show up in reads,
 * queries, and scans", DynamoDB API Reference, UpdateTimeToLive). Each item's lag is drawn
 * from the seed and the item; a deletion is conditional on the expiry it judged, as TTL's
 * own deletion of an item whose expiry was moved on meanwhile would not happen.
 */
export async function ttlSweep(w: World): Promise<void> {
  // An MRSC global table has no TTL (Developer Guide, multi-Region strong consistency): with
  // several Regions on one table nothing is deleted by expiry; the write conditions alone
  // make an expired record count as absent. Each replica of the eventually consistent
  // control has TTL of its own.
  if (w.regionCount > 1 && !w.eventual) return;
  for (const table of new Set(w.regionTables)) await ttlSweepOf(w, table);
}
export async function ttlSweepOf(w: World, table: string): Promise<void> {
  const nowSeconds = Math.floor(w.nowMs / 1000);
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await w.dynamo.send(new ScanCommand({ TableName: table, ExclusiveStartKey: startKey }));
    for (const item of page.Items ?? []) {
      const expiresAt = Number(item.expiresAt?.N ?? Number.NaN);
      if (!Number.isFinite(expiresAt) || expiresAt > nowSeconds) continue;
      const pk = item.pk?.S ?? '';
      const sk = item.sk?.S ?? '';
      if (nowSeconds < expiresAt + ttlLagSeconds(w.seed, pk, sk, expiresAt)) continue;
      try {
        await w.dynamo.send(
          new DeleteItemCommand({
            TableName: table,
            Key: { pk: { S: pk }, sk: { S: sk } },
            ConditionExpression: 'expiresAt = :expiresAt',
            ExpressionAttributeValues: { ':expiresAt': { N: String(expiresAt) } },
          }),
        );
        w.stats.ttlDeletions++;
        w.trace?.(`TTL deletes ${pk} ${sk} (expired ${((nowSeconds - expiresAt) / 3600).toFixed(1)} h ago)`);
      } catch (error) {
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
}

/**
 * Days or weeks of quiet in a long run: no deliveries, but the event source keeps polling
 * (each message handled when it is visible again), TTL deletes what expired, and the hourly
 * reconciler runs. Its runs are simulated where the state can have changed: every 12 hours
 * in the first day after activity (each run reads 24 hours), then at least every 6 days
 * (its parked sweep keeps a paused route's records 7 days ahead, and its stranded sweep reads
 * any age); an hourly run in between reads an empty window and finds nothing new.
 * `redrivesNowAndThen`: a person redrives the DLQ from the console now and then meanwhile.
 */
export async function quietLeap(w: World, ms: number, redrivesNowAndThen = true): Promise<void> {
  // Outages and brownouts last hours (route-config.ts, OUTAGE_HORIZON_SECONDS: a day at
  // most), not the days a quiet stretch spans: they are over by its start. A late redrive
  // leapt weeks with a brownout on, and each receive of a message for 6 days was throttled
  // until it reached the DLQ (seed 1147).
  w.sqsDown = false;
  w.isolated = undefined;
  if (w.dynamoPlan === BROWNOUT) w.dynamoPlan = w.shape.dynamo;
  const until = w.nowMs + ms;
  let quietSince = w.nowMs;
  for (let round = 0; round < 400 && w.nowMs < until; round++) {
    await runAllToEnd(w);
    let worked = false;
    for (let i = 0; i < 50 && (await pollAny(w)); i++) {
      worked = true;
      await runAllToEnd(w);
    }
    if (worked) quietSince = w.nowMs;
    const nextRun = w.nowMs - quietSince < DAY ? 12 * HOUR : 6 * DAY;
    const hidden = w.allWorkQueues.flatMap((q) => q.snapshot().map((m) => m.visibleAt)).filter((t) => t > w.nowMs);
    const nextMessage = hidden.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...hidden);
    const target = Math.min(until, w.nowMs + nextRun, nextMessage);
    // To the next message, the schedule's runs on the way; a leap of its own runs it below.
    if (target === nextMessage) await leapTo(w, target);
    else w.setNow(target);
    if (target === nextMessage && target < until) continue;
    await checkCopiesOutliveRecords(w);
    await ttlSweep(w);
    checkDlq(w);
    // Now and then a person redrives the DLQ from the console: redrives weeks apart, each
    // making FAILED work run again (and, if it fails again, a new copy that must outlive it).
    // (Not while the person of the last-day redrives is at the DLQ: they redrive on last days only.)
    if (w.random() < 0.25 && redrivesNowAndThen) moveTask(w);
    await runReconcilerHourly(w);
    await runAllToEnd(w);
  }
  w.setNow(Math.max(w.nowMs, until));
}

/**
 * The quiet weeks at the end of a long run with a person who redrives the DLQ on the last
 * day of its oldest copy, each time (RunShape.lastDayRedrives), until `untilMs`. A redriven
 * copy of hopeless work fails again and sends a new one, so one body object is read every
 * 13 to 14 days for weeks; a console redrive that SQS sends straight back (its receive count
 * kept) leaves the copy unread 14 days more, until a CLI redrive runs it.
 */
export async function redriveOnLastDays(w: World, untilMs: number): Promise<void> {
  const oldestEnd = (): number => Math.min(...w.dlqs.flatMap((q) => q.snapshot().map((m) => m.expiresAt)).filter((t) => t > w.nowMs));
  for (let i = 0; i < 100 && w.nowMs < untilMs; i++) {
    const u = w.lastDayRandom();
    const fromConsole = w.lastDayRandom() < 0.5;
    // None there yet (work failing again reaches the DLQ after its receives): a quiet day.
    if (oldestEnd() === Number.POSITIVE_INFINITY) {
      await quietLeap(w, Math.min(DAY, untilMs - w.nowMs), false);
      continue;
    }
    const target = oldestEnd() - (0.05 + u * 0.9) * DAY;
    if (target >= untilMs) return;
    if (target > w.nowMs) await quietLeap(w, target - w.nowMs, false);
    w.stats.lateRedrives++;
    w.trace?.(`a person redrives the DLQ on its oldest copy's last day, ${fromConsole ? 'from the console' : 'with the CLI'}`);
    if (fromConsole) moveTask(w);
    else redriveCli(w);
  }
}
