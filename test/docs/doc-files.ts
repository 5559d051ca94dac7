/**
 * The repository's documentation, as the doc tests read it: the README, a newcomer's path,
 * and the reference pages under docs/, one page each. A block a test checks (a command, a
 * quoted example, the state diagram) is found by its marker in whichever of these files
 * holds it, so text can move between them without a test losing it.
 */
import { readFileSync } from 'node:fs';

/** Every documentation file, in reading order: the README first, whose walk-through runs first. */
export const DOC_FILES = [
  'README.md',
  'docs/local-stack.md',
  'docs/deploying.md',
  'docs/guarantees.md',
  'docs/routes.md',
  'docs/large-payloads.md',
  'docs/ordering.md',
  'docs/state-machine.md',
  'docs/operating.md',
  'docs/console.md',
  'docs/construct.md',
  'docs/several-regions.md',
  'docs/architecture.md',
  'docs/your-code.md',
  'docs/layout.md',
] as const;

export type DocFile = (typeof DOC_FILES)[number];

/** The text of a documentation file, by its path in the repository. */
export function readDoc(path: DocFile): string {
  return readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
}

/** Every documentation file with its text. */
export function allDocs(): { readonly path: DocFile; readonly text: string }[] {
  return DOC_FILES.map((path) => ({ path, text: readDoc(path) }));
}

/** Markdown without its fenced code blocks: a `#` line there is code, not a heading, and its links are not links. */
export function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
}

/** Every id a link can reach on a page: GitHub's heading ids (HTML dropped, lowercase, punctuation dropped, spaces to hyphens, repeats numbered) and each `<a id>`. */
export function anchorsOf(markdown: string): Set<string> {
  const text = prose(markdown);
  const ids = new Set([...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1] ?? ''));
  const seen = new Map<string, number>();
  for (const [, heading = ''] of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = heading
      .replace(/<[^>]*>/g, '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}
