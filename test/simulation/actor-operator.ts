/** The operator actor: a person's pauses, resumes and redrives (the console's move task, the CLI's receive-send-delete, the bulk redrive). */
import { bulkRedrive } from '../../lambdas/routes/bulk-redrive.ts';
import { routeControl } from '../../lambdas/routes/route-control.ts';
import { DynamoDbFailedRecords } from '../../lambdas/store/dynamodb-failed-records.ts';
import { DynamoDbParkedRecords } from '../../lambdas/store/dynamodb-parked-records.ts';
import { checkDlq } from './checkers/dlq-holds-only-dead-workers-work.ts';
import { perRegion } from './regions.ts';
import { DAY, HOUR } from './sim-constants.ts';
import { traced } from './sim-util.ts';
import type { SimulatedQueue } from './simulated-sqs.ts';
import { routeStateOf } from './world-ports.ts';
import { queueForRoute } from './world-queues.ts';
import { quietLeap } from './world-time.ts';
import { ROUTE_NAMES } from './world.ts';
import type { World } from './world.ts';

/** The route control and the bulk redrive, on the operator's client. */
export function buildOperator(w: World): void {
  const operatorParked = w.sched.gate(perRegion(w, (table) => new DynamoDbParkedRecords(w.clientOf.operator, table)), 'parked');
  w.control = routeControl({
    states: routeStateOf(w, w.clientOf.operator),
    parked: operatorParked,
    queue: w.gatedQueue,
    routes: [...w.routes.keys()],
    now: w.now,
  });
  // A person's bulk redrive (`retryproof redrive`), on the operator's faulty client: FAILED
  // work found through the sparse failed index runs once more, each record once.
  w.bulk = bulkRedrive({
    failed: w.sched.gate(traced(perRegion(w, (table) => new DynamoDbFailedRecords(w.clientOf.operator, table, w.config.clockSkewSeconds)), 'failed', w.trace), 'failed'),
    parked: operatorParked,
    states: routeStateOf(w, w.clientOf.operator),
    queue: w.gatedQueue,
    routes: [...w.routes.keys()],
    now: w.now,
    // Paced by the simulated clock's steps, not by real waits.
    sleep: () => Promise.resolve(),
  });
}

/** Notes the dead-letter copies on the work queue stamped now: the ones a person's redrive just made. */
export function notePersonCopies(w: World): void {
  for (const m of w.allWorkQueues.flatMap((q) => q.snapshot())) {
    const id = (JSON.parse(m.body) as { deadLetterId?: string }).deadLetterId;
    if (id !== undefined && m.sentAt === w.nowMs) w.personCopies.add(`${id}\u0000${String(m.sentAt)}`);
  }
}
/** A person's console redrive of each Region's DLQ (the console works on one Region's queues). */
export function moveTask(w: World): void {
  checkDlq(w);
  for (const dlq of w.dlqs) {
    const moved = dlq.startMessageMoveTask();
    w.trace?.(`a person's console redrive (move task) moves ${moved} dead-letter ${moved === 1 ? 'copy' : 'copies'} from ${dlq.name} to its work queue`);
  }
  notePersonCopies(w);
}

export function redriveCli(w: World): void {
  checkDlq(w);
  // The CLI's local redrive: receive from the DLQ, send to the work queue, delete, Region by Region.
  for (let r = 0; r < w.regionCount; ) {
    const dlq = w.dlqs[r] as SimulatedQueue;
    const batch = dlq.receive(10);
    if (batch.length === 0) {
      r++;
      continue;
    }
    for (const m of batch) {
      // As `retryproof dlq redrive` does it locally: back to the queue of the route it names.
      const queue = queueForRoute(w, r, m.messageAttributes.route?.stringValue);
      queue.send(m.body, Object.fromEntries(Object.entries(m.messageAttributes).map(([n, v]) => [n, { DataType: v.dataType, ...(v.stringValue === undefined ? {} : { StringValue: v.stringValue }) }])));
      dlq.delete(m.receiptHandle);
    }
    notePersonCopies(w);
  }
}

export async function pauseOp(w: World, a: number, b: number): Promise<void> {
  const route = a < 0.8 && !w.shape.longPause ? ROUTE_NAMES.pay : ROUTE_NAMES.alt;
  w.stats.pauses++;
  await w.sched.spawn('operator', `pause ${route}`, async () => {
    await w.control.pause(route, 'simulated operator pause');
  }, { region: w.regionAt(b) });
}

export async function resumeOp(w: World, a: number, b: number): Promise<void> {
  const route = a < 0.8 && !w.shape.longPause ? ROUTE_NAMES.pay : ROUTE_NAMES.alt;
  w.stats.resumes++;
  await w.sched.spawn('operator', `resume ${route}`, async () => {
    await w.control.resume(route);
  }, { region: w.regionAt(b) });
}

export function redriveConsoleOp(w: World): void {
  moveTask(w);
}

export async function lateRedriveOp(w: World, a: number): Promise<void> {
  // A person redrives on a copy's last day (defect 7). In a run of weeks, the clock goes
  // quietly to within a day of the oldest dead-letter copy's end of retention, and the
  // DLQ is redriven. Work that fails again sends a new copy, which waits 14 days more:
  // a record must outlive each copy of it, however many redrives it has had.
  if (!w.shape.long) return;
  // None there yet: a quiet hour or two first, in which hopeless work spends its budget.
  if (w.dlqs.every((q) => q.snapshot().length === 0)) await quietLeap(w, (1 + a) * HOUR);
  const ends = w.dlqs.flatMap((q) => q.snapshot().map((m) => m.expiresAt));
  if (ends.length === 0) return;
  const target = Math.min(...ends) - (0.05 + a * 0.9) * DAY;
  if (target > w.nowMs) await quietLeap(w, target - w.nowMs);
  w.stats.lateRedrives++;
  moveTask(w);
}

export function redriveCliOp(w: World): void {
  redriveCli(w);
}

export async function redriveBulkOp(w: World, a: number, b: number): Promise<void> {
  // A person's `retryproof redrive`: one route or all, all of time or the last hours, FAILED
  // records only or PARKED ones too; interleaved with everything else, and crash-prone.
  const all = [...w.routes.keys()];
  const selected = a < 0.4 ? all : [a < 0.7 ? ROUTE_NAMES.pay : ROUTE_NAMES.alt];
  const sinceMs = b < 0.5 ? undefined : w.nowMs - (1 + b * 6) * HOUR;
  w.stats.bulkRedrives++;
  await w.sched.spawn('operator', `bulk redrive ${selected.join(',')}`, async () => {
    const out = await w.bulk.run({ routes: selected, ...(sinceMs === undefined ? {} : { sinceMs }), includeParked: b > 0.8 }, { ratePerSecond: 1e9 });
    w.stats.bulkRedriven += out.redriven;
  }, { region: w.regionAt(b) });
}
