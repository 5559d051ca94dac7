/** Ingest sends the first message, and at most one resend per window after that. */
import type { KeyState } from '../key-state.ts';

export function checkIngestSendsPerWindow(k: KeyState, violations: string[]): void {
  for (const [window, sent] of k.ingestSends) {
    if (sent > 2) violations.push(`${k.key}: ingest sent ${sent} work messages within one resend window (${window})`);
  }
}
