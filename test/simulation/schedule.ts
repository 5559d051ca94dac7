/**
 * The schedule a seed draws: a list of operations that do not depend on the state (an operation
 * that does not apply is skipped), so a failing schedule shrinks by deleting operations.
 * Which actor runs each operation: operations.ts.
 */
import { seededRandom } from '../../scripts/storm/storm-plan.ts';

export const OPS = [
  'deliver',
  'duplicate',
  'burst',
  'poll',
  'step',
  'crash',
  'tick',
  'wait',
  'jump',
  'stall',
  'leap',
  'reconcile',
  'pause',
  'resume',
  'redrive-console',
  'redrive-cli',
  'redrive-bulk',
  'sqs-outage',
  'ddb-brownout',
  'sqs-duplicate',
  'unseen-receive',
  'replay',
  'ttl',
  'edge',
  'slow-lease',
  'crash-after-post',
  'late-redrive',
  'isolate',
] as const;
export type OpName = (typeof OPS)[number];

/** One operation; `a` and `b` in [0, 1) pick among whatever the state offers when it runs. */
export interface Op {
  readonly op: OpName;
  readonly a: number;
  readonly b: number;
}

const WEIGHTS: Readonly<Record<OpName, number>> = {
  deliver: 8,
  duplicate: 9,
  burst: 2.5,
  poll: 20,
  step: 40,
  crash: 3,
  tick: 9,
  wait: 2,
  jump: 1,
  stall: 1,
  leap: 0.15,
  reconcile: 1.2,
  pause: 0.6,
  resume: 0.9,
  'redrive-console': 0.6,
  'redrive-cli': 0.5,
  'redrive-bulk': 0.5,
  'sqs-outage': 0.6,
  'ddb-brownout': 0.6,
  'sqs-duplicate': 3,
  'unseen-receive': 1.5,
  replay: 1.2,
  ttl: 0.5,
  edge: 1.5,
  'slow-lease': 1,
  'crash-after-post': 1,
  'late-redrive': 1.5,
  isolate: 0.6,
};

/** The storm's seedable PRNG (mulberry32). */
export const prng = seededRandom;

/** The schedule a seed draws. */
export function scheduleOf(seed: number, length: number): Op[] {
  const random = prng(seed);
  const total = Object.values(WEIGHTS).reduce((s, w) => s + w, 0);
  const ops: Op[] = [];
  for (let i = 0; i < length; i++) {
    let pick = random() * total;
    let op: OpName = 'step';
    for (const name of OPS) {
      pick -= WEIGHTS[name];
      if (pick < 0) {
        op = name;
        break;
      }
    }
    ops.push({ op, a: random(), b: random() });
  }
  return ops;
}
