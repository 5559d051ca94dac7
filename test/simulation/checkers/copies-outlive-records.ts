/**
 * A person may redrive a dead-letter copy at any time while it waits in the DLQ: its record
 * must outlive it (`expiresAt` at or past the instant the copy leaves the DLQ by retention),
 * or the redrive is refused as "record expired" and accepted work can never run (defect 7).
 * Only the record's current copy is judged: an older one (an SQS duplicate of a copy since
 * redriven) names a deadLetterId the record no longer has, and its redrive is refused anyway.
 */
import { RECORD_STATUS } from '../../../lambdas/domain/event-record.ts';
import { noteBouncedUnseen } from '../dlq-watch.ts';
import { DAY } from '../sim-constants.ts';
import { workKey } from '../sim-util.ts';
import type { World } from '../world.ts';
export async function checkCopiesOutliveRecords(w: World): Promise<void> {
  for (const m of w.dlqs.flatMap((q) => q.snapshot())) {
    if (m.expiresAt <= w.nowMs) continue;
    const body = JSON.parse(m.body) as { route?: string; key?: string; deadLetterId?: string };
    if (body.deadLetterId === undefined || body.route === undefined || body.key === undefined) continue;
    const k = w.keys.get(workKey(body.route, body.key));
    if (noteBouncedUnseen(w, m)) continue;
    const record = await w.observerStore.get(body.route, body.key);
    const leaves = ((m.expiresAt - w.startMs) / DAY).toFixed(1);
    if (record === undefined) {
      if (k?.failed === true && k.lastDeadLetterId === body.deadLetterId && k.bouncedUnseen !== true) {
        w.violations.push(`${body.key}: its dead-letter copy waits in the DLQ until day ${leaves}, but its record is gone (a redrive is refused: accepted work can never run)`);
      }
      continue;
    }
    if (record.status !== RECORD_STATUS.failed || record.deadLetterId !== body.deadLetterId) continue;
    // A person's copy made once its record had expired, of work whose copy SQS had sent
    // straight back unseen: the record expired while no code of ours could see that copy,
    // as when it is gone (above), only not deleted yet (seed 1285, TTL 19 days: a copy
    // bounced on days 0.6, 1.6 and 7.0, then redriven with the CLI on day 20.7; its record
    // expired on day 19.0).
    if (k?.bouncedUnseen === true && record.expiresAt * 1000 <= m.sentAt) continue;
    if (record.expiresAt * 1000 < m.expiresAt) {
      w.trace?.(`${body.key}: dead-letter copy ${m.messageId} stamped day ${((m.sentAt - w.startMs) / DAY).toFixed(2)} outlives its record`);
      w.violations.push(
        `${body.key}: its dead-letter copy waits in the DLQ until day ${leaves}, but its record expires on day ` +
          `${((record.expiresAt * 1000 - w.startMs) / DAY).toFixed(1)} (a redrive between is refused: accepted work can never run)`,
      );
    }
  }
}
