/**
 * The repository stands on its own: no file in it points outside it, and every relative
 * link in its markdown leads somewhere.
 *
 * - No file names the workspace folder beside the repository or the design document kept
 *   there (OUTSIDE below); the project's design is docs/architecture.md.
 * - Every relative link in a markdown file (`[text](path)`, `[text](path#anchor)`,
 *   `[text](#anchor)`) stays inside the repository, names a file or folder that is in it,
 *   and its #anchor names a heading of the file (GitHub's heading ids).
 * - A section that prose or a comment names exists: the architecture document or the
 *   README followed by a comma and a heading in double quotes, or the architecture
 *   document followed by #anchor.
 *
 * "In the repository" is what git tracks plus new files it does not ignore, so a file
 * about to be committed is checked too.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, prose } from './doc-files.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The workspace folder beside the repository, and the design document kept there; split so this file does not name them. */
const WORKSPACE = 'shared';
const DESIGN_DOC = ['DESIGN', 'md'].join('.');
/** Paths to the workspace beside the repository. */
const OUTSIDE = [String.raw`\.\./${WORKSPACE}\b`, String.raw`/work/${WORKSPACE}\b`, DESIGN_DOC.replace('.', String.raw`\.`)];
const OUTSIDE_PATTERN = new RegExp(OUTSIDE.join('|'));

const FILES = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f !== '');
const FILE_SET = new Set(FILES);
const FOLDERS = new Set(FILES.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));

/** The text of a repository file, or undefined for a binary one (or one deleted but not yet committed). */
function textOf(file: string): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(`${REPO}${file}`);
  } catch {
    return undefined;
  }
  return bytes.includes(0) ? undefined : bytes.toString('utf8');
}

const MARKDOWN = FILES.filter((f) => f.endsWith('.md'));

/** The heading texts of a markdown file, as written (inline code marks, HTML and a decision's number `D12. ` removed). */
function headingTexts(markdown: string): Set<string> {
  return new Set(
    [...prose(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*$/gm)].map((m) =>
      (m[1] ?? '').replaceAll('`', '').replace(/<[^>]*>/g, '').replace(/^D\d+\. /, '').trim(),
    ),
  );
}

interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

function linksOf(file: string, markdown: string): Link[] {
  const links: Link[] = [];
  prose(markdown)
    .split('\n')
    .forEach((text, i) => {
      for (const m of text.matchAll(/\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)) {
        links.push({ file, line: i + 1, target: m[1] ?? '' });
      }
    });
  return links;
}

/** Why a relative link is broken, or undefined when it resolves. External links are not fetched. */
function brokenReason(link: Link): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return undefined;
  const [rawPath = '', anchor] = link.target.split('#', 2);
  const path = decodeURI(rawPath);
  const target = path === '' ? link.file : posix.normalize(posix.join(posix.dirname(link.file), path)).replace(/\/$/, '');
  if (target.startsWith('../') || target === '..' || posix.isAbsolute(path)) return `${target} is outside the repository`;
  const isFile = FILE_SET.has(target);
  if (!isFile && !FOLDERS.has(target)) return `${target} does not exist in the repository`;
  if (anchor !== undefined && anchor !== '') {
    if (!isFile || !target.endsWith('.md')) return `#${anchor} on ${target}, which is not a markdown file`;
    if (!anchorsOf(textOf(target) ?? '').has(anchor)) return `${target} has no heading #${anchor}`;
  }
  return undefined;
}

describe('the repository stands on its own', () => {
  it('has no file that names a path outside the repository', () => {
    // Prepare
    expect(FILES.length).toBeGreaterThan(100);
    // Act
    const hits = FILES.flatMap((file) =>
      (textOf(file) ?? '').split('\n').flatMap((text, i) => (OUTSIDE_PATTERN.test(text) ? [`${file}:${i + 1}: ${text.trim()}`] : [])),
    );
    // Assess
    expect(hits).toEqual([]);
  });

  it('recognises such a path when it is there', () => {
    expect(OUTSIDE_PATTERN.test(`see [the design](../${WORKSPACE}/notes.md)`)).toBe(true);
    expect(OUTSIDE_PATTERN.test(`(${DESIGN_DOC}, "Observability")`)).toBe(true);
    expect(OUTSIDE_PATTERN.test('see docs/architecture.md, "Metrics and alarms"')).toBe(false);
  });

  it('has a relative target that exists for every link in its markdown', () => {
    // Prepare
    expect(MARKDOWN).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md']));
    const links = MARKDOWN.flatMap((file) => linksOf(file, textOf(file) ?? ''));
    expect(links.filter((l) => l.file === 'README.md').length).toBeGreaterThan(3);
    // Act
    const broken = links.flatMap((link) => {
      const reason = brokenReason(link);
      return reason === undefined ? [] : [`${link.file}:${link.line}: (${link.target}) ${reason}`];
    });
    // Assess
    expect(broken).toEqual([]);
  });

  it('finds a broken link, a link out of the repository and a missing anchor', () => {
    const at = (target: string) => brokenReason({ file: 'docs/example.md', line: 1, target });
    expect(at('architecture.md#record-states')).toBeUndefined();
    expect(at('../README.md#guarantees')).toBeUndefined();
    expect(at('../lambdas/store')).toBeUndefined();
    expect(at('https://example.com/nowhere')).toBeUndefined();
    expect(at('missing.md')).toMatch(/does not exist/);
    expect(at(`../../${WORKSPACE}/notes.md`)).toMatch(/outside the repository/);
    expect(at('architecture.md#no-such-heading')).toMatch(/no heading/);
  });

  it('names only sections that exist, when a file points to a section of the architecture or the README', () => {
    // Prepare
    const sections = {
      'docs/architecture.md': textOf('docs/architecture.md') ?? '',
      'README.md': textOf('README.md') ?? '',
    } as const;
    const named = /(docs\/architecture\.md|README(?:\.md)?),? "([^"]+)"|(docs\/architecture\.md)#([\w-]+)/g;
    let references = 0;
    // Act
    const missing = FILES.flatMap((file) =>
      (textOf(file) ?? '').split('\n').flatMap((text, i) =>
        [...text.matchAll(named)].flatMap((m) => {
          references++;
          const where = m[1] === undefined ? 'docs/architecture.md' : m[1] === 'docs/architecture.md' ? m[1] : 'README.md';
          const doc = sections[where];
          const ok = m[2] !== undefined ? headingTexts(doc).has(m[2]) : anchorsOf(doc).has(m[4] ?? '');
          return ok ? [] : [`${file}:${i + 1}: ${m[0]}`];
        }),
      ),
    );
    // Assess
    expect(references).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });
});

describe('anchorsOf', () => {
  it('makes the ids GitHub gives headings', () => {
    const ids = anchorsOf('# retryproof: architecture\n## Keys, fingerprints and TTL\n```\n# not a heading\n```\n## `npm start`\n## Keys, fingerprints and TTL\n');
    expect([...ids]).toEqual(['retryproof-architecture', 'keys-fingerprints-and-ttl', 'npm-start', 'keys-fingerprints-and-ttl-1']);
    expect([...anchorsOf('### D12. A pause reaches the workers late <a id="pause-cache"></a>\n')]).toEqual(['pause-cache', 'd12-a-pause-reaches-the-workers-late']);
  });
});
