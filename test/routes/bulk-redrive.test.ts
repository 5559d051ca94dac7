/**
 * A person's bulk redrive (`retryproof redrive`) on DynamoDB Local and fauxqs, with the real
 * ingest and executor: FAILED work is selected by route, time of receipt, error and key through
 * the sparse `failed` index, runs once more, and never twice: not on a second run, not after an
 * interruption, not when the DLQ copies of the same records are moved back afterwards.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { PermanentActionError } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { bulkRedrive, createBulkRedrive, RedriveSelectionError } from '../../lambdas/routes/bulk-redrive.ts';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDbFailedRecords, FailedIndexMissingError } from '../../lambdas/store/dynamodb-failed-records.ts';
import { EVENTS_TABLE, eventsTableDefinition } from '../../lambdas/store/table-schema.ts';
import { DynamoDbParkedRecords } from '../../lambdas/store/dynamodb-parked-records.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { DEAD_LETTER_STAMP_MARGIN_MS, strandedPartition } from '../../lambdas/store/record-transitions.ts';
import { createEventsTable, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { executorFixture, MAX_RECEIVE_COUNT, ROUTE } from '../support/executor-fixture.ts';
import type { ExecutorFixture } from '../support/executor-fixture.ts';
import { testConfig } from '../support/test-config.ts';

/** An action that fails for good while its downstream is "down", and counts its runs per key. */
function flakyDownstream(): { action: Action; down: { value: boolean }; runs: Map<string, number> } {
  const down = { value: true };
  const runs = new Map<string, number>();
  const action: Action = (ctx) => {
    runs.set(ctx.key, (runs.get(ctx.key) ?? 0) + 1);
    if (down.value) return Promise.reject(new PermanentActionError(`downstream refused ${String((ctx.body as { band?: string }).band)}`));
    return Promise.resolve({ ok: true });
  };
  return { action, down, runs };
}

/** A fixture on an events table of its own: a selection by time or route sees no other file's FAILED work. */
async function failingFixture(action: Action): Promise<ExecutorFixture> {
  const eventsTable = await createEventsTable(localDynamoClient(inject('dynamoEndpoint')), `events-redrive-${randomUUID().slice(0, 8)}`);
  return executorFixture({ actions: { flaky: action }, action: 'flaky', eventsTable });
}

/** The bulk redrive of a fixture's receiver, on the executor's clock. */
function redriveOf(fx: ExecutorFixture) {
  return createBulkRedrive({
    dynamo: localDynamoClient(inject('dynamoEndpoint')),
    eventsTable: fx.eventsTable,
    sqs: localSqsClient(inject('sqsEndpoint')),
    queueUrl: fx.queueUrl,
    config: resolveConfig(testConfig(fx.routes, { queue: { maxReceiveCount: MAX_RECEIVE_COUNT } })),
    routes: fx.routes.map((r) => r.name),
    now: () => fx.now(),
  });
}

/** Delivers `count` keys, waiting a millisecond around them so the bands' instants are apart. */
async function band(fx: ExecutorFixture, name: string, count: number, prefix = 'evt_'): Promise<{ keys: string[]; startMs: number; endMs: number }> {
  const startMs = Date.now();
  await new Promise((r) => setTimeout(r, 2));
  const keys: string[] = [];
  for (let i = 0; i < count; i++) keys.push(await fx.deliver({ band: name, i }, `${prefix}${name}_${i}_${startMs}`));
  await new Promise((r) => setTimeout(r, 2));
  return { keys, startMs, endMs: Date.now() };
}

describe('retryproof redrive (bulk redrive by filter)', () => {
  it('redrives one time band exactly once, leaves the others FAILED, survives an interruption, and a later console move runs nothing twice', async () => {
    // Prepare: three bands fail for good; every dead-letter copy reaches the DLQ.
    const work = flakyDownstream();
    const fx = await failingFixture(work.action);
    const b1 = await band(fx, 'one', 4);
    const b2 = await band(fx, 'two', 5);
    const b3 = await band(fx, 'three', 4);
    await fx.drain();
    for (const key of [...b1.keys, ...b2.keys, ...b3.keys]) expect(await fx.record(key)).toMatchObject({ status: 'FAILED', runs: 1 });
    const redrive = redriveOf(fx);
    const selection = { routes: [ROUTE], sinceMs: b2.startMs, untilMs: b2.endMs };

    // Act 1: the dry run counts band two and lists it, changing nothing.
    const preview = await redrive.preview(selection, 3);
    expect(preview.count).toBe(5);
    expect(preview.byRoute).toEqual({ [ROUTE]: 5 });
    expect(preview.first.map((r) => r.key)).toEqual(b2.keys.slice(0, 3));
    expect(preview.first[0]).toMatchObject({ status: 'FAILED', runs: 1, lastError: expect.stringContaining('downstream refused two') as unknown });
    expect(await fx.record(b2.keys[0]!)).toMatchObject({ status: 'FAILED' });

    // Act 2: the downstream is back; a person redrives band two and interrupts after two records.
    work.down.value = false;
    fx.clockOffsetMs = DEAD_LETTER_STAMP_MARGIN_MS + 60_000;
    const stop = new AbortController();
    const first = await redrive.run(selection, {
      ratePerSecond: 1000,
      signal: stop.signal,
      onProgress: (p) => {
        if (p.redriven === 2) stop.abort();
      },
    });
    expect(first).toMatchObject({ total: 5, redriven: 2, interrupted: true });
    // Act 3: the same command again finishes the rest.
    const second = await redrive.run(selection, { ratePerSecond: 1000 });
    expect(second).toMatchObject({ total: 3, redriven: 3, skipped: 0, interrupted: false });
    await fx.drain();
    // A third run finds nothing left to redrive.
    expect((await redrive.preview(selection)).count).toBe(0);

    // Assess: band two ran exactly once more; bands one and three are untouched.
    for (const key of b2.keys) {
      expect(work.runs.get(key), key).toBe(2);
      expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', runs: 2, redrives: 1 });
    }
    for (const key of [...b1.keys, ...b3.keys]) {
      expect(work.runs.get(key), key).toBe(1);
      expect(await fx.record(key)).toMatchObject({ status: 'FAILED', runs: 1, redrives: 0 });
    }

    // Act 4: later, a person moves the whole DLQ back, as the console's "Start DLQ redrive" does.
    const dead = await fx.takeDeadLetters();
    expect(dead.map((d) => d.key).sort()).toEqual([...b1.keys, ...b2.keys, ...b3.keys].sort());
    fx.clockOffsetMs += DEAD_LETTER_STAMP_MARGIN_MS + 60_000;
    for (const copy of dead) await fx.redrive(copy);
    await fx.drain();
    // Assess: band two's copies ran nothing (their records are COMPLETED); the others ran once more.
    for (const key of b2.keys) expect(work.runs.get(key), key).toBe(2);
    for (const key of [...b1.keys, ...b3.keys]) {
      expect(work.runs.get(key), key).toBe(2);
      expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', redrives: 1 });
    }
    expect(await fx.takeDeadLetters()).toEqual([]);
  });

  it('selects by the text of the last error and by a key prefix, and refuses a selection it cannot run', async () => {
    // Prepare
    const work = flakyDownstream();
    const fx = await failingFixture(work.action);
    const red = await band(fx, 'red', 3, 'order_');
    const blue = await band(fx, 'blue', 2, 'refund_');
    await fx.drain();
    const redrive = redriveOf(fx);
    // Act and assess
    expect((await redrive.preview({ routes: [ROUTE], errorContains: 'refused blue' })).first.map((r) => r.key).sort()).toEqual([...blue.keys].sort());
    expect((await redrive.preview({ routes: [ROUTE], keyPrefix: 'order_' })).count).toBe(red.keys.length);
    expect((await redrive.preview({ routes: [ROUTE], keyPrefix: 'order_', errorContains: 'refused blue' })).count).toBe(0);
    await expect(redrive.preview({ routes: ['nope'] })).rejects.toThrow(RedriveSelectionError);
    await expect(redrive.preview({ routes: [ROUTE], sinceMs: 2_000, untilMs: 1_000 })).rejects.toThrow('must come after --since');
    await expect(redrive.run({ routes: [ROUTE] }, { ratePerSecond: 0 })).rejects.toThrow('the rate must be above 0');
  });

  it('keeps a record it took back in the retry partition when its send fails, so the reconciler sends it: nothing taken back is lost', async () => {
    // Prepare: one FAILED record; the work queue refuses every send.
    const work = flakyDownstream();
    const fx = await failingFixture(work.action);
    const { keys } = await band(fx, 'lost', 1);
    await fx.drain();
    fx.clockOffsetMs = DEAD_LETTER_STAMP_MARGIN_MS + 60_000;
    const dynamo = localDynamoClient(inject('dynamoEndpoint'));
    const redrive = bulkRedrive({
      failed: new DynamoDbFailedRecords(dynamo, fx.eventsTable),
      parked: new DynamoDbParkedRecords(dynamo, fx.eventsTable),
      states: new DynamoDbRouteStateStore(dynamo, fx.eventsTable),
      queue: { send: () => Promise.reject(new Error('SQS is down')) },
      routes: [ROUTE],
      now: () => fx.now(),
    });
    // Act
    await expect(redrive.run({ routes: [ROUTE], keyPrefix: keys[0] }, { ratePerSecond: 1000 })).rejects.toThrow('SQS is down');
    // Assess: RECEIVED with a fresh budget, out of the failed index, in the retry partition the reconciler reads every run.
    const record = await fx.record(keys[0]!);
    expect(record).toMatchObject({ status: 'RECEIVED', attempts: 0, redrives: 1, gsi2pk: strandedPartition(ROUTE) });
    expect(record?.gsi3pk).toBeUndefined();
    expect((await redriveOf(fx).preview({ routes: [ROUTE] })).count).toBe(0);
  });

  it('says what is missing when the events table predates the failed index (a kept table), instead of a raw ValidationException', async () => {
    // Prepare: a table as versions before the index created it.
    const dynamo = localDynamoClient(inject('dynamoEndpoint'));
    const definition = eventsTableDefinition();
    const name = `events-old-${randomUUID().slice(0, 8)}`;
    await dynamo.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        ...definition,
        AttributeDefinitions: definition.AttributeDefinitions.filter((a) => !a.AttributeName.startsWith('gsi3')),
        GlobalSecondaryIndexes: definition.GlobalSecondaryIndexes.filter((i) => i.IndexName !== EVENTS_TABLE.failedIndex.name),
      }),
    );
    const failed = new DynamoDbFailedRecords(dynamo, name);
    // Act
    const listing = (async () => {
      for await (const page of failed.listFailed(ROUTE, {})) return page;
      return [];
    })();
    // Assess
    await expect(listing).rejects.toThrow(FailedIndexMissingError);
    await expect(listing).rejects.toThrow(`the events table ${name} has no "failed" index`);
  });
});
