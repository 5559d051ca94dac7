/**
 * README.md's "Use it in your own CDK app" is the example's code: every ```ts block marked
 * `<!-- example: PATH -->` must appear, character for character, in that file of the
 * repository, so the README cannot show code that no longer compiles or runs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** Each marked block: the file it quotes and its text. */
function examples(markdown: string): { path: string; code: string }[] {
  const found: { path: string; code: string }[] = [];
  for (const match of markdown.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)\n```/g)) {
    found.push({ path: match[1] ?? '', code: match[2] ?? '' });
  }
  return found;
}

describe("README's own-CDK-app section", () => {
  const blocks = examples(README);

  it('quotes the example app: its stack, its configuration, its action and its ledger', () => {
    expect(blocks.map((b) => b.path)).toEqual([
      'examples/orders-app/orders-stack.ts',
      'examples/orders-app/retryproof.config.ts',
      'examples/orders-app/src/place-order.ts',
      'examples/orders-app/src/orders-ledger.ts',
    ]);
  });

  it.each(examples(README).map((b) => [b.path, b.code] as const))('shows %s as it is in the repository', (path, code) => {
    const file = readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
    expect(code.split('\n').length).toBeGreaterThan(5);
    expect(file).toContain(code);
  });
});
