/**
 * Work that could still heal itself never reaches the DLQ; only workers that died may push it
 * there. Looked at before every redrive, which would take the evidence away.
 */
import { noteBouncedUnseen } from '../dlq-watch.ts';
import type { World } from '../world.ts';
export function checkDlq(w: World): void {
  for (const m of w.dlqs.flatMap((q) => q.snapshot())) {
    const id = (JSON.parse(m.body) as { deadLetterId?: string }).deadLetterId;
    if (id !== undefined) w.dlqExpiries.set(id, Math.max(w.dlqExpiries.get(id) ?? 0, m.expiresAt));
    noteBouncedUnseen(w, m);
    if (w.seenInDlq.has(m.messageId)) continue;
    w.seenInDlq.add(m.messageId);
    if (w.judged.has(m.body)) continue;
    w.judged.add(m.body);
    const body = JSON.parse(m.body) as { route?: string; key?: string; deadLetterId?: string };
    const deaths = w.crashed.get(m.messageId) ?? 0;
    const lost = w.wasted.get(m.messageId) ?? 0;
    if (body.deadLetterId !== undefined || deaths + lost >= 2) continue;
    w.violations.push(`${String(body.key)}: a work message reached the DLQ though ${deaths} of the workers holding it died and ${lost} of its receives ran nothing`);
  }
}
