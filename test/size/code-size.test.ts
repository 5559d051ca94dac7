import { describe, expect, it } from 'vitest';
import { LIMITS, measureSizes } from '../../scripts/code-size.ts';

/** A function or file, as `npm run size` names it. */
const named = (m: { readonly file: string; readonly line: number; readonly name: string; readonly lines: number }): string => `${m.file}:${m.line} ${m.name} (${m.lines} lines)`;

describe('the size limits of issue 45 (npm run size)', () => {
  const sizes = measureSizes();

  it('measures every folder the limits name', () => {
    // Assess: a folder renamed or emptied would pass every limit unmeasured.
    for (const limit of LIMITS) expect(sizes.files.filter((f) => f.file.startsWith(limit.under)).length, limit.under).toBeGreaterThan(0);
    expect(sizes.functions.length).toBeGreaterThan(100);
  });

  it('has no function over its folder\'s limit (80 lines in lambdas/, lib/ and cli/; 150 in test/simulation/)', () => {
    expect(sizes.overFunctions.map(named)).toEqual([]);
  });

  it('has no file over its folder\'s limit (400 lines in lambdas/ and lib/; 800 in test/simulation/)', () => {
    expect(sizes.overFiles.map((f) => `${f.file} (${f.lines} lines)`)).toEqual([]);
  });
});
