/** The executor's store, observed: which records failed, which were redriven, which completions were fenced out. */
import { RECORD_STATUS } from '../../lambdas/domain/event-record.ts';
import type { ExecutionStore } from '../../lambdas/ports/execution-store.ts';
import { recordPk } from '../../lambdas/store/record-keys.ts';
import { summaryOf, workKey } from './sim-util.ts';
import { ownWriteOf } from './world-dynamo.ts';
import { accountRedrives, rawRecord } from './world-ports.ts';
import type { World } from './world.ts';

export function observeExecutionStore(w: World): ExecutionStore {
  return new Proxy(w.realExecutionStore, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        const arg = args[0] as { route?: string; key?: string; deadLetterId?: string };
        if ((prop === 'fail' || prop === 'failExhausted') && arg.route !== undefined && arg.key !== undefined) {
          const failing = w.keys.get(workKey(arg.route, arg.key));
          if (failing !== undefined) failing.lastDeadLetterId = arg.deadLetterId;
        }
        // The latest lease as the write sets out: one already superseded then cannot land.
        const tokenAtCall = arg.route === undefined || arg.key === undefined ? undefined : w.keys.get(workKey(arg.route, arg.key))?.leaseToken;
        // A fenced write's own commit must count as its own (defect 2): one that committed and
        // lost its answer meets itself on the SDK's retry, and the token fence refuses that retry.
        const fencedCall = prop === 'complete' || prop === 'release' || prop === 'fail' || prop === 'failExhausted' || prop === 'deferLeased';
        const writer = w.sched.current()?.id;
        const call = ++w.portCalls;
        const ownWrite = fencedCall && writer !== undefined && arg.route !== undefined && arg.key !== undefined ? ownWriteOf(writer, recordPk(arg.route, arg.key), call) : undefined;
        // Waiting for a rate limit spends no attempt: across a deferral, attempts grow by no
        // more than the leases taken meanwhile (runs), whatever else interleaves.
        const beforeDefer = (prop === 'deferForRate' || prop === 'deferLeased') && arg.route !== undefined && arg.key !== undefined ? await w.observerStore.get(arg.route, arg.key) : undefined;
        let out: unknown;
        try {
          out = await w.callScope.run(call, () => method.apply(target, args));
        } catch (error) {
          w.trace?.(`  store.${String(prop)} ${String(arg.key ?? args[1])} threw ${String(error)}`);
          // A completion that failed on DynamoDB (its attempts spent) lost the record after the effect.
          const k = arg.route === undefined || arg.key === undefined ? undefined : w.keys.get(workKey(arg.route, arg.key));
          if (prop === 'complete' && k !== undefined) k.excused++;
          throw error;
        }
        w.trace?.(`  store.${String(prop)} ${String(arg.key ?? args[1])} -> ${summaryOf(out)}`);
        const deferred = (out as { kind?: string } | undefined)?.kind === 'deferred' || (prop === 'deferLeased' && out === true);
        if (prop === 'deferLeased' && out === true) w.stats.rateSlotsMissed++;
        if (deferred && arg.route !== undefined && arg.key !== undefined) {
          const waiting = w.keys.get(workKey(arg.route, arg.key));
          if (waiting !== undefined) waiting.deferrals++;
        }
        if (beforeDefer !== undefined && deferred) {
          const afterDefer = await w.observerStore.get(beforeDefer.route, beforeDefer.key);
          // A slot given up (deferLeased) hands back the attempt its own lease spent: one fewer.
          const handedBack = prop === 'deferLeased' ? 1 : 0;
          if (afterDefer?.receivedAt === beforeDefer.receivedAt && afterDefer.attempts - beforeDefer.attempts > afterDefer.runs - beforeDefer.runs - handedBack) {
            w.violations.push(`${beforeDefer.key}: a deferral for the rate limit spent an attempt (attempts ${beforeDefer.attempts} -> ${afterDefer.attempts}, leases ${beforeDefer.runs} -> ${afterDefer.runs})`);
          }
        }
        const committedId = ownWrite === undefined ? undefined : w.committedUnanswered.get(ownWrite);
        if (ownWrite !== undefined) w.committedUnanswered.delete(ownWrite);
        if (out === false && committedId !== undefined && arg.route !== undefined && arg.key !== undefined) {
          // Told "not yours" while the item still carries this very write's nonce: nothing came
          // between its commit and the answer, so the write that stands is this worker's own.
          const stands = await rawRecord(w, arg.route, arg.key);
          if (stands?.writeId?.S === committedId) {
            w.violations.push(
              `${arg.key}: ${String(prop)} committed and lost its answer; the SDK's retry met the write itself, which still stands, and it was taken for another worker's (fenced out)`,
            );
          }
        }
        const k = arg.route === undefined || arg.key === undefined ? undefined : w.keys.get(workKey(arg.route, arg.key));
        if (k !== undefined) {
          // A record seen FAILED failed, whoever's write made it so: a fail whose answer was lost
          // after the SDK's last attempt threw, and the next lease found it FAILED.
          const seen = out as { status?: string; record?: { status?: string } } | undefined;
          const seenFailed = (seen?.status ?? seen?.record?.status) === RECORD_STATUS.failed;
          if (((prop === 'fail' || prop === 'failExhausted') && out === true) || (prop !== 'redrive' && seenFailed)) {
            k.failed = true;
            k.everFailed = true;
          }
          if (prop === 'redrive' && out === true) {
            // Only a person redrives FAILED work: the copy that won must be one a person made
            // (the console's move task, or the CLI's receive-send-delete), or SQS's duplicate of
            // one, which keeps its SentTimestamp (defect 10).
            const won = arg as { deadLetterId?: string; stampedAtMs?: number };
            if (!w.personCopies.has(`${String(won.deadLetterId)}\u0000${String(won.stampedAtMs)}`)) {
              w.violations.push(`${k.key}: FAILED work redriven by a copy no person made (dead-letter copy ${String(won.deadLetterId)}, stamped ${String(won.stampedAtMs)}): it ran again with no person involved`);
            }
          }
          // Whatever the answer, the record's count says whether a redrive committed (seed 468:
          // one committed and answered false).
          if (prop === 'redrive') accountRedrives(w, k, (await w.observerStore.get(k.route, k.key))?.redrives);
          if (prop === 'complete' && out === false) k.excused++;
          if (prop === 'complete' && out === true) {
            // One generation of a record completes once: its lease lets one run at a time hold
            // it, and the token fence refuses a run that lost it. Two completions are two runs
            // that each took the key to COMPLETED: two effects, whatever the downstream dedupes.
            const generation = (w.sched.current()?.meta.leasedGeneration as Map<string, number> | undefined)?.get(workKey(k.route, k.key));
            const done = k.completions.get(generation ?? -1) ?? 0;
            k.completions.set(generation ?? -1, done + 1);
            if (done === 1) {
              w.stats.doubleCompletions++;
              w.violations.push(`${k.key}: completed twice (generation ${String(generation)}): two runs each took it to COMPLETED`);
            }
          }
          if (prop === 'acquireLease' && (out as { kind?: string }).kind === 'leased') {
            const leased = (out as { record?: { receivedAt?: number; redrives?: number; runs?: number; leaseUntil?: number } }).record;
            const generation = leased?.receivedAt;
            // The generation this worker runs, for its action's charges (see forgottenLater).
            const leaser = w.sched.current()?.meta;
            if (leaser !== undefined && generation !== undefined) {
              ((leaser.leasedGeneration as Map<string, number> | undefined) ?? (leaser.leasedGeneration = new Map<string, number>())).set(workKey(k.route, k.key), generation);
            }
            // Leases are taken in the order of their commits, and each counts one more run;
            // their answers may come back in another order (a slow answer, seed 42). The
            // latest lease is the one with the most runs on the latest generation.
            const laterGeneration = generation !== undefined && k.generation !== undefined && generation > k.generation;
            const latest = laterGeneration || k.generation === undefined || (generation === k.generation && (leased?.runs ?? 0) > (k.leaseRuns ?? 0));
            if (laterGeneration) {
              // A lease on a later generation (a re-post after the record expired, of a body whose
              // earlier generation never ran): a new record, with a budget and a state of its own.
              k.failed = false;
              k.runsInBudget = 0;
              k.redrivesSeen = leased?.redrives ?? 0;
            }
            if (latest) {
              k.generation = generation ?? k.generation;
              k.leaseRuns = leased?.runs;
              k.leaseToken = (arg as { token?: string }).token;
              if (leased?.leaseUntil !== undefined) k.lease = { untilMs: leased.leaseUntil, holder: w.sched.current()?.id ?? 0 };
            }
            if (generation === k.generation) accountRedrives(w, k, leased?.redrives);
          }
          // Fenced writes land only under the latest lease: the token of the last lease taken
          // when the write set out. (Judged then, not at its answer: a write's answer may come
          // back after a later lease's, which took the record once the write had released it;
          // seed 42.)
          const fencedWrite = prop === 'complete' || prop === 'release' || prop === 'fail' || prop === 'deferLeased';
          if (fencedWrite && out === true && (arg as { token?: string }).token !== tokenAtCall) {
            w.violations.push(`${k.key}: ${prop} landed under lease token ${String((arg as { token?: string }).token)}, not the latest lease's`);
          }
        }
        return out;
      };
    },
  });
}
