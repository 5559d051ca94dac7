/**
 * How much work waits in each of a receiver's queues: the shared work queue (with the routes
 * whose work it carries), each route's own queue (ownQueue), and the one DLQ behind them all.
 * The numbers are SQS's approximate counts (GetQueueAttributes): visible, in flight (received,
 * not deleted) and delayed (a rate-limited route's deferred wake-ups, sent with DelaySeconds).
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { queueNameOf } from '../../lambdas/queue/sqs-message-visibility.ts';
import type { Target } from '../target.ts';

export interface QueueDepth {
  /** The queue's name. */
  readonly queue: string;
  readonly kind: 'shared' | 'route' | 'dlq';
  /** The routes whose work it carries (the DLQ's: every route's dead letters). */
  readonly routes: readonly string[];
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

async function depthOf(target: Target, url: string): Promise<Pick<QueueDepth, 'visible' | 'inFlight' | 'delayed'>> {
  const out = await target.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const a = out.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/** The depth of every queue of the receiver: the shared queue first, then each route's own, then the DLQ. */
export async function queueDepths(target: Target): Promise<QueueDepth[]> {
  const own = target.routeQueueUrls ?? {};
  const queues: { url: string; kind: QueueDepth['kind']; routes: readonly string[] }[] = [
    { url: target.queueUrl, kind: 'shared', routes: target.routes.filter((r) => own[r] === undefined) },
    ...Object.entries(own).map(([route, url]) => ({ url, kind: 'route' as const, routes: [route] })),
    { url: target.dlqUrl, kind: 'dlq', routes: target.routes },
  ];
  return Promise.all(queues.map(async (q) => ({ queue: queueNameOf(q.url), kind: q.kind, routes: q.routes, ...(await depthOf(target, q.url)) })));
}
