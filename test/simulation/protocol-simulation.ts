/**
 * A deterministic simulation of the whole execution protocol: the real ingestDelivery,
 * executor handler, reconciler and route control, on DynamoDB Local, with a simulated clock
 * and a simulated SQS (simulated-sqs.ts). A seed draws a shape (run-shape.ts) and a schedule of
 * operations (schedule.ts), each made by an actor (operations.ts): deliveries and duplicates,
 * executor invocations, interleavings at every port call, crashes at any of them, clock steps
 * and jumps, reconciler runs, pauses and resumes, DLQ redrives and SQS outages. After the
 * schedule, faults stop, the system settles (settle.ts), and the invariants are checked, one a
 * file (checkers/). Senders behave as webhook senders do: a key none of whose copies got a 2xx
 * is sent again while settling.
 *
 * The layout follows TigerBeetle's simulator: the world (world.ts, world-*.ts), one module per
 * actor (actor-ingest.ts, actor-executor.ts, actor-reconciler.ts, actor-operator.ts), the map
 * from operations to actors, the settle phase, the checkers.
 */
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createEventsTable } from '../../local/aws-clients.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';
import { buildExecutor } from './actor-executor.ts';
import { buildIngest } from './actor-ingest.ts';
import { buildOperator } from './actor-operator.ts';
import { buildReconciler } from './actor-reconciler.ts';
import { checkInvariants } from './checkers/run-checkers.ts';
import { countRequests } from './faulty-dynamodb.ts';
import { OPERATIONS } from './operations.ts';
import { describeShape } from './run-shape.ts';
import type { RunResult } from './run-stats.ts';
import type { Op } from './schedule.ts';
import type { Scheduler } from './scheduler.ts';
import { endLongRun, settle, tally } from './settle.ts';
import { drainActors } from './stepping.ts';
import { configure } from './world-config.ts';
import { buildClients, replicateDue } from './world-dynamo.ts';
import { drawKeys } from './world-keys.ts';
import { buildPorts } from './world-ports.ts';
import { buildQueues } from './world-queues.ts';
import { ROUTE_NAMES, World } from './world.ts';
import type { RunOptions, SimulationEnv } from './world.ts';

export { OPS, prng, scheduleOf } from './schedule.ts';
export type { Op, OpName } from './schedule.ts';
export { shapeBlockOf, shapeOf } from './run-shape.ts';
export type { RunShape } from './run-shape.ts';
export { MAX_STATS, emptyStats } from './run-stats.ts';
export type { RunResult, RunStats } from './run-stats.ts';
export type { RunOptions, SimulationEnv } from './world.ts';

let tableCounter = 0;

/** A client on DynamoDB Local whose requests the scheduler counts per actor. */
function simulationClient(env: SimulationEnv, sched: Scheduler): DynamoDBClient {
  const client = new DynamoDBClient({ endpoint: env.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  countRequests(client, sched);
  return client;
}

/**
 * Runs one schedule and checks the invariants. Never throws for a violation: it returns them.
 * @param ops the schedule; `scheduleOf(seed, n)` or a shrunk one
 */
export async function runSchedule(env: SimulationEnv, seed: number, ops: readonly Op[], options: RunOptions = {}): Promise<RunResult> {
  const w = new World(env, seed, options);
  w.dynamo = simulationClient(env, w.sched);
  const suffix = `${seed}-${tableCounter++}`;
  w.eventsTable = await createEventsTable(w.dynamo, `sim-events-${suffix}`);
  w.regionTables = [w.eventsTable];
  for (let r = 1; r < w.regionCount; r++) w.regionTables.push(w.eventual ? await createEventsTable(w.dynamo, `sim-events-${suffix}-r${r}`) : w.eventsTable);
  const uninstallTimers = w.timers.install();
  try {
    return await runWorld(w, ops);
  } finally {
    uninstallTimers();
    for (const table of new Set(w.regionTables)) await w.dynamo.send(new DeleteTableCommand({ TableName: table }));
    w.dynamo.destroy();
  }
}

/** The world's parts, in the order the run draws them. */
function setUp(w: World): void {
  configure(w);
  buildQueues(w);
  buildClients(w);
  buildPorts(w);
  buildExecutor(w);
  buildIngest(w);
  buildReconciler(w);
  buildOperator(w);
  drawKeys(w);
  w.executorTimeoutMs = w.config.executorTimeoutSeconds * 1000;
  w.stallLeaseMs = Math.min(...w.config.routes.map((r) => r.leaseSeconds)) * 1000;
}

async function runWorld(w: World, ops: readonly Op[]): Promise<RunResult> {
  setUp(w);
  if (w.trace !== undefined) for (const line of describeShape(w.shape, w.regionCount, w.eventual)) w.trace(line);
  w.trace?.(`run of seed ${w.seed}, ${ops.length} operations`);
  if (w.shape.longPause) {
    // Paused from the start to the settle: longer than a place lives (RunShape.longPause).
    w.stats.longPauses++;
    await w.sched.spawn('operator', `pause ${ROUTE_NAMES.pay} for weeks`, async () => {
      await w.control.pause(ROUTE_NAMES.pay, 'simulated pause of weeks');
    });
    await drainActors(w);
  }
  for (const { op, a, b } of ops) {
    w.stats.steps++;
    if (w.eventual) await replicateDue(w);
    w.trace?.(`op ${op} a=${a.toFixed(3)} b=${b.toFixed(3)}`);
    // An operation of no await makes none here either: the world's interleavings stay as they were.
    const made = OPERATIONS[op].run(w, a, b);
    if (made instanceof Promise) await made;
  }
  await endLongRun(w);
  await settle(w);
  await tally(w);
  await checkInvariants(w);
  w.trace?.(`run of seed ${w.seed} ends: ${w.violations.length === 0 ? 'no violation' : w.violations.join('; ')}`);
  // Each once: a check made after every quiet stretch, or at every receive of a copy that keeps
  // coming back, finds the same fault again and again.
  return { seed: w.seed, violations: [...new Set(w.violations)], stats: w.stats };
}
