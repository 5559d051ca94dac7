/**
 * The reasoning lives once, in docs/ (docs/architecture.md's numbered decisions above all), and
 * code cites it in a line: `// why: docs/architecture.md#<anchor>`. This keeps every such cite
 * good: each `<page>.md#<anchor>` named in lambdas/, lib/, cli/, docs/ or the README must be a
 * heading of that page (GitHub's id for it) or an `<a id="...">` in it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf } from './doc-files.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CITING = ['lambdas', 'lib', 'cli', 'docs'] as const;
const TEXT = /\.(ts|mts|mjs|js|json|md)$/;

/** A page's path from its file name: the README at the root, every other page under docs/. */
function pagePath(name: string): string {
  return name === 'README.md' ? 'README.md' : `docs/${name}`;
}

interface Cite {
  readonly file: string;
  readonly line: number;
  readonly page: string;
  readonly anchor: string;
}

/** The `<page>.md#<anchor>` cites in a file's text. */
export function citesIn(file: string, text: string): Cite[] {
  return text.split('\n').flatMap((line, i) =>
    [...line.matchAll(/([A-Za-z0-9_-]+\.md)#([A-Za-z0-9_-]+)/g)].map((m) => ({ file, line: i + 1, page: pagePath(m[1] ?? ''), anchor: m[2] ?? '' })),
  );
}

/** Why a cite does not resolve, or undefined when it does. */
export function brokenReason(cite: Cite, read: (page: string) => string | undefined): string | undefined {
  const markdown = read(cite.page);
  if (markdown === undefined) return `${cite.page} does not exist`;
  return anchorsOf(markdown).has(cite.anchor) ? undefined : `${cite.page} has no heading or <a id> "${cite.anchor}"`;
}

function citingFiles(): string[] {
  const inFolders = CITING.flatMap((dir) =>
    readdirSync(join(REPO, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && TEXT.test(e.name))
      .map((e) => join(e.parentPath, e.name).slice(REPO.length)),
  );
  return ['README.md', ...inFolders];
}

const pages = new Map<string, string | undefined>();
function readPage(page: string): string | undefined {
  if (!pages.has(page)) {
    try {
      pages.set(page, readFileSync(join(REPO, page), 'utf8'));
    } catch {
      pages.set(page, undefined);
    }
  }
  return pages.get(page);
}

describe('the why-cites of the code and the docs', () => {
  it('each name a heading or an <a id> of the page they cite', () => {
    // Prepare
    const cites = citingFiles().flatMap((file) => citesIn(file, readFileSync(join(REPO, file), 'utf8')));
    expect(cites.filter((c) => c.page === 'docs/architecture.md').length).toBeGreaterThan(20);
    // Act
    const broken = cites.flatMap((c) => {
      const reason = brokenReason(c, readPage);
      return reason === undefined ? [] : [`${c.file}:${c.line}: ${basename(c.page)}#${c.anchor}: ${reason}`];
    });
    // Assess
    expect(broken).toEqual([]);
  });

  it('finds a cite of a missing anchor, and of a missing page', () => {
    const page = '# Title\n### D12. A pause reaches the workers late <a id="pause-cache"></a>\n```\n## not a heading\n```\n';
    const read = (p: string) => (p === 'docs/example.md' ? page : undefined);
    const [good, byHeading, inCode, gone, noPage] = citesIn(
      'lambdas/x.ts',
      '// why: docs/example.md#pause-cache\n// example.md#d12-a-pause-reaches-the-workers-late\n// example.md#not-a-heading\n// example.md#gone\n// missing.md#title',
    );
    expect(good && brokenReason(good, read)).toBeUndefined();
    expect(byHeading && brokenReason(byHeading, read)).toBeUndefined();
    expect(inCode && brokenReason(inCode, read)).toMatch(/no heading/);
    expect(gone && brokenReason(gone, read)).toMatch(/no heading or <a id> "gone"/);
    expect(noPage && brokenReason(noPage, read)).toMatch(/does not exist/);
  });
});
