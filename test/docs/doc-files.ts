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
