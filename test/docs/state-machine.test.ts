import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as transitions from '../../lambdas/store/record-transitions.ts';
import { RECORD_STATUS } from '../../lambdas/domain/event-record.ts';

const readme = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
const mermaid = /```mermaid\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
/** `FROM --> TO: name (who)` lines of the README's state diagram. */
const arrows = [...mermaid.matchAll(/^\s*(\[\*\]|[A-Z]+) --> (\[\*\]|[A-Z]+): (\w+) \(([^)]+)\)/gm)].map((m) => ({
  from: m[1],
  to: m[2],
  name: m[3] ?? '',
  who: m[4] ?? '',
}));

describe("the state diagram of docs/architecture.md", () => {
  it('names, on every arrow, a transition that record-transitions.ts exports', () => {
    expect(arrows.length).toBeGreaterThan(10);
    for (const arrow of arrows) expect(Object.keys(transitions), `${arrow.from} --> ${arrow.to}`).toContain(arrow.name);
  });

  it('draws every state-changing transition of record-transitions.ts, and every record state', () => {
    const drawn = new Set(arrows.map((a) => a.name));
    for (const name of ['claimKey', 'acquireLease', 'complete', 'release', 'fail', 'failExhausted', 'park', 'unpark', 'redrive']) {
      expect(drawn, name).toContain(name);
    }
    const states = new Set(arrows.flatMap((a) => [a.from, a.to]));
    for (const status of Object.values(RECORD_STATUS)) expect(states, status).toContain(status);
  });

  it('lists every drawn transition in the table beside it, with its maker', () => {
    for (const name of new Set(arrows.map((a) => a.name))) expect(readme).toMatch(new RegExp(`^\\| \`${name}\` \\| \\S`, 'm'));
  });
});
