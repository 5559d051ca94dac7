import { describe, expect, it } from 'vitest';
import * as transitions from '../../lambdas/store/record-transitions.ts';
import { RECORD_STATUS } from '../../lambdas/domain/event-record.ts';
import { allDocs } from './doc-files.ts';

/** The one state diagram of the docs (a ```mermaid stateDiagram), and the page that holds it. */
const STATE_DIAGRAM = /```mermaid\n(stateDiagram[\s\S]*?)```/;
const holders = allDocs().filter((d) => STATE_DIAGRAM.test(d.text));
const page = holders[0];
const readme = page?.text ?? '';
const mermaid = STATE_DIAGRAM.exec(readme)?.[1] ?? '';
/** `FROM --> TO: name (who)` lines of the state diagram. */
const arrows = [...mermaid.matchAll(/^\s*(\[\*\]|[A-Z]+) --> (\[\*\]|[A-Z]+): (\w+) \(([^)]+)\)/gm)].map((m) => ({
  from: m[1],
  to: m[2],
  name: m[3] ?? '',
  who: m[4] ?? '',
}));

describe('the state diagram of the docs', () => {
  it('is drawn once, on docs/state-machine.md', () => {
    expect(holders.map((d) => d.path)).toEqual(['docs/state-machine.md']);
  });

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
