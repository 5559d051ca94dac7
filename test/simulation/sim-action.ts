/**
 * The action: its outcome is drawn per run; its effect is a charge on the downstream, and its
 * ledger entry is posted apart from it, in the key's mode (KeyState.ledgerMode). It keeps the
 * contract for user code: it honours its AbortSignal and ctx.deadline (by its own clock), so it
 * makes no call once either has passed (a run is the stretch of true time between its first and
 * its last call, and no two runs of one key may overlap); an entry exists only for an effect
 * (one posted first is voided when its effect fails; when the effect turns out to be an earlier
 * run's, it takes that run's booking over); entries carry attempt: ctx.attempt.
 */
import { PermanentActionError, RetryableActionError } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import type { ActionRun } from './key-state.ts';
import { MAX_ATTEMPTS } from './sim-constants.ts';
import type { SimLedgerEntry } from './sim-downstream.ts';
import { workKey } from './sim-util.ts';
import { ROUTE_NAMES } from './world.ts';
import type { World } from './world.ts';

/** Every action call of every run, numbered in the order they are made. */
let actionCallSeq = 0;

export function makeAction(w: World): Action {
  return async (ctx) => {
    // The event is known by its body, as a downstream would know the order, whatever key it came under.
    const order = (ctx.body as { order?: unknown } | null)?.order;
    const k = typeof order === 'string' ? w.keysByOrder.get(order) : undefined;
    if (k === undefined || k.route !== ctx.route) throw new PermanentActionError('unknown order');
    k.protocolKeys.add(ctx.key);
    // The exact bytes the sender sent, whether the message carried them or the bucket kept them.
    if (!ctx.rawBody.equals(k.body)) w.violations.push(`${ctx.key}: run ${ctx.attempt} got a body of ${ctx.rawBody.length} B that is not the ${k.body.length} B the sender sent`);
    if (k.failed) w.violations.push(`${ctx.key}: a FAILED record ran again without a redrive (run ${ctx.attempt})`);
    k.runsInBudget++;
    if (ctx.route === ROUTE_NAMES.pay) w.payStarts.push({ trueMs: w.nowMs, ownMs: w.now() });
    if (k.runsInBudget > MAX_ATTEMPTS) w.violations.push(`${ctx.key}: ${k.runsInBudget} runs in one budget, above maxAttempts ${MAX_ATTEMPTS}`);
    const place = w.observedPlaces.current(ctx.route, ctx.key);
    const run: ActionRun = { attempt: ctx.attempt, budget: `${k.generation ?? 0}/${k.redrivesSeen}`, actor: w.sched.current()?.id ?? 0, ...(place === undefined ? {} : { place }) };
    k.runs.push(run);
    const call = async (label: string): Promise<void> => {
      await w.sched.yieldPoint(label);
      w.timers.fire();
      if (ctx.signal.aborted || w.now() >= ctx.deadline) throw new RetryableActionError(`aborted before ${label}: its deadline passed`);
      run.firstCallMs ??= w.nowMs;
      run.lastCallMs = w.nowMs;
      run.firstCallSeq ??= ++actionCallSeq;
      run.lastCallSeq = ++actionCallSeq;
    };
    /** Voids an entry this run posted: its own clean-up, made even past the deadline (no effect). */
    const voidEntry = async (entry: SimLedgerEntry): Promise<void> => {
      await w.sched.yieldPoint('ledger.void');
      w.simLedger.void(entry.entryId);
    };
    const entryOf = (chargeId: string) => ({
      route: ctx.route,
      idempotencyKey: ctx.key,
      amount: 100,
      currency: 'EUR',
      postedAt: w.now(),
      attempt: ctx.attempt,
      chargeId,
    });
    await call('downstream.prepare');
    const roll = w.random();
    const stutter = k.runs.length <= k.stutters;
    // Some errors hold characters SQS refuses (U+FFFF, U+FFFE): a last error, and the copy that carries it, must still travel.
    if ((k.hopeless && !(w.downstreamFixed && k.fixable)) || stutter || roll < 0.06) {
      if (roll < 0.03) w.stats.refusedCharErrors++;
      throw new RetryableActionError(roll < 0.03 ? 'simulated downstream 503 before anything: \uFFFE' : 'simulated downstream 503 before anything');
    }
    if (roll < 0.1) {
      if (roll < 0.08) w.stats.refusedCharErrors++;
      throw new PermanentActionError(roll < 0.08 ? 'simulated refusal: upstream said \uFFFF' : 'simulated refusal');
    }
    const idem = ctx.idempotencyKey;
    let own: SimLedgerEntry | undefined;
    // The orders this worker posted for and has not charged yet (the crash-after-post operation's mark).
    const meta = w.sched.current()?.meta;
    const postedFirst = meta === undefined ? undefined : ((meta.postedFirst as Set<string> | undefined) ?? (meta.postedFirst = new Set<string>()));
    if (k.ledgerMode === 'before') {
      // Posted first, for the charge about to be made (a remembered one, or the next).
      await call('ledger.post-first');
      w.stats.ledgerApartFromEffect++;
      own = (await w.simLedger.post(entryOf(w.downstream.planned(idem, w.nowMs)))) as SimLedgerEntry;
      postedFirst?.add(k.order);
    }
    try {
      await call('downstream.charge');
    } catch (error) {
      postedFirst?.delete(k.order);
      if (own !== undefined) await voidEntry(own);
      throw error;
    }
    postedFirst?.delete(k.order);
    if (w.random() < 0.08) {
      if (own !== undefined) await voidEntry(own);
      throw new RetryableActionError('simulated downstream 503: nothing charged');
    }
    const generation = (meta?.leasedGeneration as Map<string, number> | undefined)?.get(workKey(k.route, k.key));
    const { charge, replayed } = w.downstream.charge(idem, ctx.attempt, w.nowMs, generation);
    k.chargeIds.add(charge.chargeId);
    w.trace?.(`  downstream charge ${ctx.key} run ${ctx.attempt}: ${charge.chargeId}${replayed ? ' (replayed: an earlier run made it)' : ''}`);
    if (!replayed) {
      k.effects++;
      const actor = w.sched.current();
      if (actor !== undefined) (actor.meta.effectKeys as Set<string> | undefined)?.add(k.order);
    }
    if (own !== undefined) {
      // The charge is an earlier run's (the downstream replayed it), and that run's entry may
      // book it: this run takes the booking over and removes the earlier one, so that one
      // entry names the effect and it is the completing run's, the one the reconciler keeps.
      // Voiding its own entry instead left none of the completing run's, and the reconciler
      // kept the earliest: an entry whose run died between its post and its effect, while the
      // entry of the run that charged was reversed, and its charge refunded (seed 1492).
      const held = replayed ? w.simLedger.holder(charge.chargeId) : undefined;
      if (replayed) w.simLedger.takeOver(charge.chargeId, own.entryId);
      if (held !== undefined && held.entryId !== own.entryId) await voidEntry(held);
      return { ok: true, charge: charge.chargeId };
    }
    await call('ledger.post');
    if (k.ledgerMode === 'after-post-fails' && w.random() < 0.5) {
      // The effect stands and its entry is not posted: a retryable failure; the next run's
      // charge is the downstream's replay, and it books the entry.
      w.stats.ledgerApartFromEffect++;
      throw new RetryableActionError('simulated ledger outage after the effect');
    }
    if (!replayed || w.simLedger.booking(charge.chargeId) === undefined) await w.simLedger.post(entryOf(charge.chargeId));
    return { ok: true, charge: charge.chargeId };
  };
}
