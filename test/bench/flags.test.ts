/** The flags of the bench and cost commands (bench/flags.ts), read with node:util parseArgs. */
import { describe, expect, it } from 'vitest';
import { parseFlags, UsageError } from '../../bench/flags.ts';

const SPEC = { records: 'number', 'budget-s': 'number', json: 'switch' } as const;

function parsed(argv: string[]): { numbers: Record<string, number>; switches: string[] } {
  const flags = parseFlags(argv, SPEC);
  return { numbers: Object.fromEntries(flags.numbers), switches: [...flags.switches] };
}

describe('parseFlags of the bench', () => {
  it('takes a number as --name value or --name=value, with _ between digits, and a switch bare', () => {
    // Act
    const out = parsed(['--records', '1_000', '--budget-s=-2.5', '--json']);
    // Assess
    expect(out).toEqual({ numbers: { records: 1000, 'budget-s': -2.5 }, switches: ['json'] });
  });

  it.each([
    [['--recrods', '5'], 'unknown flag --recrods'],
    [['--nope=1'], 'unknown flag --nope'],
    [['--'], 'unknown flag --'],
    [['--json=yes'], '--json takes no value'],
    [['--records'], '--records needs a number'],
    [['--records', '--json'], '--records needs a number'],
    [['--records='], '--records needs a number'],
    [['--records', 'many'], '--records must be a number, got "many"'],
    [['--records', '1', '--records', '2'], '--records is given twice'],
    [['5'], 'unexpected argument "5"'],
    [['-j'], 'unexpected argument "-j"'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => parseFlags(argv, SPEC)).toThrow(new UsageError(message));
  });

  it('reports the first mistake in the order typed', () => {
    expect(() => parseFlags(['--records', 'x', '--nope'], SPEC)).toThrow(new UsageError('--records must be a number, got "x"'));
    expect(() => parseFlags(['--nope', '--records', 'x'], SPEC)).toThrow(new UsageError('unknown flag --nope'));
  });
});
