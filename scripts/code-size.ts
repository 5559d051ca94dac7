/**
 * The sizes of the shipped code and the simulation, against the limits of issue 45 (a function
 * at most 80 lines in lambdas/, lib/ and cli/; a file at most 400 in lambdas/ and lib/; in
 * test/simulation/, 150 and 800). A function's length is its whole span, closures included, as
 * a reader meets it. `npm run size` prints them; test/size/code-size.test.ts holds `npm test` to them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface Limit {
  readonly under: string;
  readonly functionLines: number;
  readonly fileLines?: number;
}

export const LIMITS: readonly Limit[] = [
  { under: 'lambdas/', functionLines: 80, fileLines: 400 },
  { under: 'lib/', functionLines: 80, fileLines: 400 },
  { under: 'cli/', functionLines: 80 },
  { under: 'test/simulation/', functionLines: 150, fileLines: 800 },
];

export interface Measured {
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

export interface Sizes {
  readonly functions: readonly Measured[];
  readonly files: readonly Measured[];
  readonly overFunctions: readonly Measured[];
  readonly overFiles: readonly Measured[];
}

/** Every function and file under the limits' folders, and those over their limit. */
export function measureSizes(): Sizes {
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
  return {
    functions,
    files,
    overFunctions: functions.filter((f) => f.lines > (limitOf(f.file)?.functionLines ?? Infinity)),
    overFiles: files.filter((f) => f.lines > (limitOf(f.file)?.fileLines ?? Infinity)),
  };
}
