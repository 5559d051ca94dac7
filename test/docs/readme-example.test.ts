/**
 * The construct page's complete example is the example's code: every ```ts block of the
 * documentation marked `<!-- example: PATH -->` must appear, character for character, in
 * that file of the repository, so the docs cannot show code that no longer compiles or runs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allDocs } from './doc-files.ts';

/** Each marked block: the doc that holds it, the file it quotes and its text. */
function examples(): { doc: string; path: string; code: string }[] {
  const found: { doc: string; path: string; code: string }[] = [];
  for (const { path: doc, text } of allDocs()) {
    for (const match of text.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)\n```/g)) {
      found.push({ doc, path: match[1] ?? '', code: match[2] ?? '' });
    }
  }
  return found;
}

describe("the docs' example of the construct in your own CDK app", () => {
  const blocks = examples();

  it('quotes the example app in docs/construct.md: its stack, its configuration, its action and its ledger', () => {
    expect(blocks.map((b) => `${b.doc}: ${b.path}`)).toEqual([
      'docs/construct.md: examples/orders-app/orders-stack.ts',
      'docs/construct.md: examples/orders-app/retryproof.config.ts',
      'docs/construct.md: examples/orders-app/src/place-order.ts',
      'docs/construct.md: examples/orders-app/src/orders-ledger.ts',
    ]);
  });

  it.each(blocks.map((b) => [b.path, b.code] as const))('shows %s as it is in the repository', (path, code) => {
    const file = readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
    expect(code.split('\n').length).toBeGreaterThan(5);
    expect(file).toContain(code);
  });
});
