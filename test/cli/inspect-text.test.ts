/**
 * `retryproof inspect` in text: the action's result is shown (it was in --json only), and a
 * body over 4 KiB shown with --with-body is cut, with a line that says how to get it whole.
 */
import { describe, expect, it } from 'vitest';
import { BODY_SHOWN_BYTES, recordText } from '../../cli/commands/inspect.ts';
import type { RecordView } from '../../cli/operations/inspect-delivery.ts';
import { executorHarness } from '../executor/executor-harness.ts';
import { inspectOnTestTable } from '../support/inspect-on-test-table.ts';

const inspect = inspectOnTestTable();

/** A completed record as inspect reads it, with `body` kept on it. */
function recordWith(body: string, result?: unknown): RecordView {
  return {
    route: 'demo',
    key: 'k-1',
    status: 'COMPLETED',
    hits: 1,
    attempts: 1,
    runs: 1,
    redrives: 0,
    deferrals: 0,
    receivedAt: Date.UTC(2026, 10, 30, 12),
    expiresAt: Date.UTC(2027, 0, 4, 12) / 1000,
    answerStatus: 202,
    fingerprint: 'f'.repeat(64),
    bodyBytes: Buffer.byteLength(body),
    bodyKept: true,
    body,
    bodyEncoding: 'utf8',
    ...(result === undefined ? {} : { result }),
  };
}

describe('retryproof inspect, text output', () => {
  it("shows the action's result, as one line of JSON", async () => {
    // Prepare
    const h = await executorHarness({ action: () => Promise.resolve({ entryId: 'entry-7', amount: 1250 }) });
    const { key, message } = await h.deliver({ amount: 1250 });
    // Act
    await h.run(message);
    const text = await inspect(key);
    // Assess
    expect(text).toContain('\n  status     COMPLETED\n');
    expect(text).toContain('\n  result     {"entryId":"entry-7","amount":1250}\n');
  });

  it('cuts a long result, saying --json holds it whole', () => {
    const text = recordText(recordWith('{}', { note: 'x'.repeat(1000) }), false);
    const line = text.split('\n').find((l) => l.startsWith('  result     ')) ?? '';
    expect(line.length).toBeLessThan(450);
    expect(line).toMatch(/… \(cut: --json holds it whole\)$/);
  });

  it('cuts a 300 KB body to its first 4 KiB, with a line saying how to get it whole', () => {
    // Prepare
    const body = JSON.stringify({ items: 'é'.repeat(150_000) });
    // Act
    const lines = recordText(recordWith(body), true).trimEnd().split('\n');
    // Assess
    const start = lines.findIndex((l) => l.startsWith('----- body of demo/k-1'));
    expect(lines[start]).toBe(`----- body of demo/k-1 (${Buffer.byteLength(body)} bytes) -----`);
    const shown = lines.slice(start + 1, -1).join('\n');
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(BODY_SHOWN_BYTES);
    expect(Buffer.byteLength(shown)).toBeGreaterThan(BODY_SHOWN_BYTES - 4);
    expect(body.startsWith(shown)).toBe(true);
    expect(lines.at(-1)).toBe(
      `----- body cut: the first ${Buffer.byteLength(shown)} of ${Buffer.byteLength(body)} bytes shown; inspect demo k-1 --with-body --json holds it whole -----`,
    );
  });

  it('shows a body of at most 4 KiB whole', () => {
    const body = 'a'.repeat(BODY_SHOWN_BYTES);
    const lines = recordText(recordWith(body), true).trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual([body, '----- end of body -----']);
  });
});
