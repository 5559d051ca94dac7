/**
 * `npm run size`: the longest functions and files of the shipped code and the simulation, against
 * the limits of issue 45 (scripts/code-size.ts). `--check` exits 1 while any limit is passed.
 */
import { parseArgs } from 'node:util';
import { LIMITS, measureSizes } from './code-size.ts';
import type { Measured } from './code-size.ts';

const { values } = parseArgs({
  options: { top: { type: 'string', default: '15' }, check: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
  strict: true,
});
const top = Number(values.top);
if (!Number.isInteger(top) || top < 1) {
  process.stderr.write(`size: --top must be a whole number of 1 or more, got "${values.top}"\n`);
  process.exit(2);
}

const { functions, files, overFunctions, overFiles } = measureSizes();
const longest = (list: readonly Measured[]): Measured[] => [...list].sort((a, b) => b.lines - a.lines).slice(0, top);

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
