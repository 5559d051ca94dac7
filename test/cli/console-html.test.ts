/** The console's HTML (cli/console/html.ts, delivery-page.ts): what a value can and cannot become in a page. */
import { describe, expect, it } from 'vitest';
import { html, page } from '../../cli/console/html.ts';
import { deliveryMain } from '../../cli/console/delivery-page.ts';
import type { Inspection, RecordView } from '../../cli/operations/inspect-delivery.ts';

const RECORD: RecordView = {
  route: 'demo',
  key: '<script>alert(1)</script>',
  status: 'FAILED',
  hits: 1,
  attempts: 3,
  runs: 3,
  redrives: 0,
  deferrals: 0,
  receivedAt: Date.UTC(2026, 11, 7, 10),
  expiresAt: Date.UTC(2027, 0, 7) / 1000,
  answerStatus: 202,
  fingerprint: 'ab'.repeat(32),
  bodyBytes: 27,
  bodyKept: true,
  lastError: 'Error: "quoted" & <b>',
  body: '{"email":"ann@example.com"}',
  bodyEncoding: 'utf8',
};

describe('the console HTML', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    const out = html`<a href="/x?k=${'"><img src=x>'}">${'<b>&</b>'}</a>`.text;
    expect(out).toBe('<a href="/x?k=&quot;&gt;&lt;img src=x&gt;">&lt;b&gt;&amp;&lt;/b&gt;</a>');
  });

  it('puts a key or an error text into a page as text, never as markup', () => {
    const found: Inspection = { record: RECORD, log: [], ledger: [] };
    const out = page({ title: 'Delivery', nav: 'none', target: 'test' }, deliveryMain('demo', RECORD.key, found, undefined, Date.now(), false));
    expect(out).not.toContain('<script>alert');
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).toContain('Error: &quot;quoted&quot; &amp; &lt;b&gt;');
  });

  it('shows a body only when asked for: otherwise its size, its fingerprint and the link that asks', () => {
    const found: Inspection = { record: RECORD, log: [], ledger: [] };
    const hidden = deliveryMain('demo', RECORD.key, found, undefined, Date.now(), false).text;
    expect(hidden).not.toContain('ann@example.com');
    expect(hidden).toContain(`27 bytes, fingerprint <span class="mono">${RECORD.fingerprint}</span>`);
    expect(hidden).toContain('body=1');
    const shown = deliveryMain('demo', RECORD.key, found, undefined, Date.now(), true).text;
    expect(shown).toContain('ann@example.com');
  });
});
