/** The bench and cost commands' flags, with node:util's parseArgs: `--name value`, `--name=value`, `--switch`. */
import { parseArgs } from 'node:util';

/** A bad command line. The commands print its message and their usage, never a stack trace. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type FlagSpec = Readonly<Record<string, 'number' | 'switch'>>;
export type ParsedFlags = { readonly numbers: ReadonlyMap<string, number>; readonly switches: ReadonlySet<string> };

/**
 * Parses `argv` against `spec`; the first mistake, in the order typed, is the one reported.
 * @throws UsageError for an unknown flag, a missing value or a value that is not a finite number
 */
export function parseFlags(argv: readonly string[], spec: FlagSpec): ParsedFlags {
  const options = Object.fromEntries(Object.entries(spec).map(([name, kind]) => [name, { type: kind === 'switch' ? ('boolean' as const) : ('string' as const) }]));
  // Non-strict, so each mistake is told in the bench's own words rather than Node's.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const numbers = new Map<string, number>();
  const switches = new Set<string>();
  for (const token of tokens) {
    if (token.kind === 'option-terminator') throw new UsageError('unknown flag --');
    if (token.kind === 'positional' || !token.rawName.startsWith('--')) throw new UsageError(`unexpected argument ${JSON.stringify(argv[token.index])}`);
    const kind = spec[token.name];
    if (kind === undefined) throw new UsageError(`unknown flag ${token.rawName.split('=')[0] ?? ''}`);
    if (kind === 'switch') {
      if (token.value !== undefined) throw new UsageError(`--${token.name} takes no value`);
      switches.add(token.name);
      continue;
    }
    const text = token.value;
    if (text === undefined || text === '' || text.startsWith('--')) throw new UsageError(`--${token.name} needs a number`);
    const value = Number(text.replaceAll('_', ''));
    if (!Number.isFinite(value)) throw new UsageError(`--${token.name} must be a number, got ${JSON.stringify(text)}`);
    if (numbers.has(token.name)) throw new UsageError(`--${token.name} is given twice`);
    numbers.set(token.name, value);
  }
  return { numbers, switches };
}
