/**
 * `npm run size`: the longest functions and files of the shipped code and the simulation, against
 * the limits of issue 45 (a function at most 80 lines in lambdas/, lib/ and cli/; a file at most
 * 400 in lambdas/ and lib/; in test/simulation/, 150 and 800). A function's length is its whole
 * span, closures included, as a reader meets it. `--check` exits 1 while any limit is passed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import ts from 'typescript';

interface Limit {
  readonly under: string;
  readonly functionLines: number;
  readonly fileLines?: number;
}

const LIMITS: readonly Limit[] = [
  { under: 'lambdas/', functionLines: 80, fileLines: 400 },
  { under: 'lib/', functionLines: 80, fileLines: 400 },
  { under: 'cli/', functionLines: 80 },
  { under: 'test/simulation/', functionLines: 150, fileLines: 800 },
];

interface Measured {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

const ROOT = join(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** The name a reader knows a function by: its own, or what it is assigned to. */
function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
  return '(anonymous)';
}

/** A `describe` or `it` block of a test file: a list of specifications, not a function a reader follows. */
function isSpecBlock(node: ts.Node): boolean {
  const call = node.parent;
  return ts.isCallExpression(call) && /^(describe|it|test)\b/.test(call.expression.getText());
}

function functionsOf(file: string): { functions: Measured[]; lines: number } {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const functions: Measured[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined && !isSpecBlock(node)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      functions.push({ file, name: nameOf(node, source), line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { functions, lines: source.getLineAndCharacterOfPosition(source.getEnd()).line + 1 };
}

const { values } = parseArgs({
  options: { top: { type: 'string', default: '15' }, check: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
  strict: true,
});
const top = Number(values.top);
if (!Number.isInteger(top) || top < 1) {
  process.stderr.write(`size: --top must be a whole number of 1 or more, got "${values.top}"\n`);
  process.exit(2);
}

const functions: Measured[] = [];
const files: Measured[] = [];
for (const limit of LIMITS) {
  for (const file of sources(limit.under)) {
    const measured = functionsOf(file);
    functions.push(...measured.functions);
    files.push({ file, name: file, line: 1, lines: measured.lines });
  }
}
const limitOf = (file: string): Limit | undefined => LIMITS.find((l) => file.startsWith(l.under));
const overFunctions = functions.filter((f) => f.lines > (limitOf(f.file)?.functionLines ?? Infinity));
const overFiles = files.filter((f) => f.lines > (limitOf(f.file)?.fileLines ?? Infinity));
const longest = (list: Measured[]): Measured[] => [...list].sort((a, b) => b.lines - a.lines).slice(0, top);

if (values.json) {
  process.stdout.write(`${JSON.stringify({ longestFunctions: longest(functions), longestFiles: longest(files).map(({ file, lines }) => ({ file, lines })), functionsOverLimit: overFunctions.length, filesOverLimit: overFiles.length }, null, 2)}\n`);
} else {
  const row = (m: Measured, withName: boolean): string => `${String(m.lines).padStart(6)}  ${withName ? `${m.file}:${m.line} ${m.name}` : m.file}`;
  process.stdout.write(`the ${top} longest functions (lines):\n${longest(functions).map((f) => row(f, true)).join('\n')}\n\n`);
  process.stdout.write(`the ${top} longest files (lines):\n${longest(files).map((f) => row(f, false)).join('\n')}\n\n`);
  const limits = LIMITS.map((l) => `${l.under} ${l.functionLines}${l.fileLines === undefined ? '' : ` / ${l.fileLines}`}`).join(', ');
  process.stdout.write(`over the limits (function / file lines: ${limits}): ${overFunctions.length} functions, ${overFiles.length} files\n`);
}
if (values.check && overFunctions.length + overFiles.length > 0) process.exit(1);
