/**
 * SQS, simulated: each Region has its own work queue and DLQ, as each Region's stack deploys them.
 * Both queues keep a message 14 days from its enqueue timestamp, as the stack deploys them
 * (lib/stateful: DLQ_RETENTION_SECONDS, and the work queue's 14 days); a copy moved to the
 * DLQ keeps its original timestamp (simulated-sqs.ts [D5]).
 */
import { DLQ_RETENTION_SECONDS } from '../../lambdas/config/route-config.ts';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';
import { SQS_MAX_MESSAGE_BYTES } from '../../lambdas/domain/queue-limits.ts';
import { RoutedWorkQueue } from '../../lambdas/queue/routed-work-queue.ts';
import { sqsBytesOf } from './delivery-bodies.ts';
import { byRegion } from './regions.ts';
import { workKey } from './sim-util.ts';
import { SimInvalidParameterValue, SimWorkQueue, SimulatedQueue } from './simulated-sqs.ts';
import { ROUTE_NAMES } from './world.ts';
import type { World } from './world.ts';

export function beforeSend(w: World, message: WorkMessage): void {
  if (w.sqsDown) throw new Error('simulated SQS outage');
  // SQS's size limit, body and attributes together ("All parts of the message attribute,
  // including Name, Type, and Value, are part of the message size restriction", SQS API
  // Reference, MessageAttributeValue). Whatever the receiver accepted must fit, copies too.
  const bytes = sqsBytesOf(message);
  if (bytes > SQS_MAX_MESSAGE_BYTES) {
    w.violations.push(`${message.key}: SQS refused a ${message.deadLetterId === undefined ? 'work message' : 'dead-letter copy'} of ${bytes} B (over ${SQS_MAX_MESSAGE_BYTES} B) for accepted work`);
    throw new SimInvalidParameterValue(`One or more parameters are invalid. Reason: Message must be shorter than ${SQS_MAX_MESSAGE_BYTES} bytes.`);
  }
  if (message.deadLetterId === undefined) {
    const k = w.keys.get(workKey(message.route, message.key));
    if (k === undefined) return;
    k.sends++;
    if (w.sched.current()?.kind === 'ingest') {
      const window = Math.floor(w.nowMs / w.resendAfterMs);
      k.ingestSends.set(window, (k.ingestSends.get(window) ?? 0) + 1);
    }
  }
}

/** Each Region's queues, and the work queue port over them. */
export function buildQueues(w: World): void {
  w.regionQueues = Array.from({ length: w.regionCount }, (_, r) => {
    const tag = r === 0 ? '' : `-r${r}`;
    const dlq = new SimulatedQueue({
      name: `dlq${tag}`,
      clock: w.clock,
      visibilityTimeoutSeconds: w.shape.visibilityTimeoutSeconds,
      moveTaskResetsReceiveCount: w.shape.moveTaskResetsReceiveCount,
      retentionSeconds: DLQ_RETENTION_SECONDS,
    });
    const queue = new SimulatedQueue({
      name: `work${tag}`,
      clock: w.clock,
      visibilityTimeoutSeconds: w.shape.visibilityTimeoutSeconds,
      redrive: { deadLetterQueue: dlq, maxReceiveCount: w.config.queue.maxReceiveCount },
      retentionSeconds: DLQ_RETENTION_SECONDS,
    });
    const shared = new SimWorkQueue(queue, { beforeSend: (message) => {
        beforeSend(w, message);
      } });
    // The pay route's own queue (ownQueue), dead-lettering into the same DLQ, as the stack deploys it.
    const own = w.shape.rate?.ownQueue === true
      ? new SimulatedQueue({
          name: `work-pay${tag}`,
          clock: w.clock,
          visibilityTimeoutSeconds: w.shape.visibilityTimeoutSeconds,
          redrive: { deadLetterQueue: dlq, maxReceiveCount: w.config.queue.maxReceiveCount },
          retentionSeconds: DLQ_RETENTION_SECONDS,
        })
      : undefined;
    const workQueue = own === undefined ? shared : new RoutedWorkQueue(shared, new Map([[ROUTE_NAMES.pay, new SimWorkQueue(own, { beforeSend: (message) => {
        beforeSend(w, message);
      } })]]));
    return { dlq, queue, own, workQueue };
  });
  /** Every work queue of every Region: the shared ones and the pay route's own. */
  w.allWorkQueues = w.regionQueues.flatMap((q) => (q.own === undefined ? [q.queue] : [q.queue, q.own]));
  w.dlqs = w.regionQueues.map((q) => q.dlq);
  w.workQueue = byRegion(w, w.regionQueues.map((q) => q.workQueue));
}

/** The work queues of a Region; with a route queue, which one `roll` picks first (each has its event source). */
export function workQueuesOf(w: World, region: number, roll: number): SimulatedQueue[] {
  const r = w.regionQueues[region];
  if (r === undefined) return [];
  if (r.own === undefined) return [r.queue];
  return roll < 0.5 ? [r.queue, r.own] : [r.own, r.queue];
}
/** The queue a message of `route` goes to in a Region: what RoutedWorkQueue picks. */
export function queueForRoute(w: World, region: number, route: string | undefined): SimulatedQueue {
  const r = w.regionQueues[region] as (typeof w.regionQueues)[number];
  return route === ROUTE_NAMES.pay && r.own !== undefined ? r.own : r.queue;
}
