/** How the world steps its actors: one at a time, killed where Lambda would kill them, woken by their own timers. */
import type { KeyState } from './key-state.ts';
import type { Actor } from './scheduler.ts';
import { EPOCH, PROGRAMMING_ERRORS } from './sim-constants.ts';
import type { World } from './world.ts';

export function killActor(w: World, actor: Actor, why: 'crash' | 'timeout'): void {
  w.trace?.(`${why} kills ${actor.label} (#${actor.id}) at ${actor.waiters.map((waiter) => waiter.label).join(' | ')}`);
  w.sched.kill(actor);
  if (actor.kind === 'ingest' && actor.meta.placing === true) w.stats.killedBeforePlace++;
  // Its work may be out and a worker's lease may start the count: a death after the send began
  // is an answer it could have given, as one after v3's mark was (architecture.md#circuit-breaker).
  // (A Lambda timeout is noticed here when the actor is next stepped, later than it struck: the
  // send's own event number stands for it.)
  const pendingHits = actor.meta.pendingHits;
  if (actor.kind === 'ingest' && typeof pendingHits === 'number' && pendingHits > 0) {
    const k = actor.meta.keyState as KeyState;
    k.unexcusedHits = (k.unexcusedHits ?? 0) + pendingHits;
  }
  const sentAtSeq = actor.meta.sentAtSeq;
  if (actor.kind === 'ingest' && typeof sentAtSeq === 'number') {
    const k = actor.meta.keyState as KeyState;
    k.diedAfterSendSeq = Math.min(k.diedAfterSendSeq ?? sentAtSeq, sentAtSeq);
  }
  if (why === 'crash') w.stats.crashes++;
  else w.stats.timeouts++;
  for (const messageId of (actor.meta.messageIds as string[] | undefined) ?? []) w.crashed.set(messageId, (w.crashed.get(messageId) ?? 0) + 1);
  for (const effectOrder of (actor.meta.effectKeys as Set<string> | undefined) ?? []) {
    const k = w.keysByOrder.get(effectOrder);
    if (k !== undefined) k.excused++;
  }
}

/**
 * Steps an actor, unless Lambda would have timed it out by now. Strands that woke by
 * themselves (their own timer fired while they waited on the network) go first, each at
 * the strand that woke: in a world where every machine runs at once, they went on at that
 * instant, whatever other actors did to the clock since.
 */
export async function wakeWoken(w: World): Promise<void> {
  if (w.waking) return;
  w.waking = true;
  try {
    for (let i = 0; i < 1_000; i++) {
      let next: { actor: Actor; at: number; index: number } | undefined;
      for (const actor of w.sched.parked()) {
        const woken = w.sched.wokenAt(actor);
        if (woken !== undefined && (next === undefined || woken.at < next.at)) next = { actor, ...woken };
      }
      if (next === undefined) return;
      w.trace?.(`${next.actor.label} (#${next.actor.id}) woke by its own timer at ${((next.at - EPOCH) / 1000).toFixed(3)} s`);
      await stepActor(w, next.actor, (next.index + 0.5) / next.actor.waiters.length);
    }
  } finally {
    w.waking = false;
  }
}

export async function stepActor(w: World, actor: Actor, pick = 0): Promise<void> {
  await wakeWoken(w);
  // It may have been stepped to its end by now.
  if (!w.sched.parked().includes(actor)) return;
  const deadline = actor.meta.deadlineMs;
  // Woken by its own timer before its deadline: it went on then, and is not timed out.
  const woken = w.sched.wokenAt(actor);
  if (woken !== undefined && (typeof deadline !== 'number' || woken.at <= deadline)) pick = (woken.index + 0.5) / actor.waiters.length;
  else if (typeof deadline === 'number' && w.nowMs > deadline) {
    killActor(w, actor, 'timeout');
    return;
  }
  w.timers.fire();
  w.trace?.(`step ${actor.label} (#${actor.id}) at ${actor.waiters.map((waiter) => waiter.label).join(' | ')}`);
  await w.sched.step(actor, pick);
  if (actor.state === 'done' || actor.state === 'failed') w.trace?.(`${actor.label} (#${actor.id}) ${actor.state}${actor.state === 'failed' ? `: ${String(actor.error)}` : ''}`);
  // A function may fail on what it meets (DynamoDB or SQS errors, its timeout), never on its own code.
  if (actor.state === 'failed' && PROGRAMMING_ERRORS.some((kind) => actor.error instanceof kind)) {
    w.violations.push(`${actor.label} failed on a programming error: ${String(actor.error)}`);
  }
}

/**
 * Before the clock moves, most invocations finish: a healthy one takes milliseconds. The
 * rest stay where they are, stalled (a long pause, a slow network), and may outlive their
 * lease or their Lambda timeout while the clock runs.
 */
export async function finishMost(w: World): Promise<void> {
  for (const actor of w.sched.parked()) {
    if (w.random() >= 0.75) continue;
    while (actor.state === 'parked') await stepActor(w, actor);
  }
}

/** Every actor to its end: before a long quiet stretch, healthy invocations finish. */
export async function runAllToEnd(w: World): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    const actor = w.sched.parked()[0];
    if (actor === undefined) return;
    await stepActor(w, actor);
  }
  w.violations.push('actors did not finish before a leap');
}

export async function drainActors(w: World): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    const actor = w.sched.parked()[0];
    if (actor === undefined) return;
    await stepActor(w, actor);
  }
  w.violations.push('actors did not finish while settling');
}
