/** A small flag parser for the bench and cost commands: `--name value`, `--name=value`, `--switch`. */

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
 * Parses `argv` against `spec`.
 * @throws UsageError for an unknown flag, a missing value or a value that is not a finite number
 */
export function parseFlags(argv: readonly string[], spec: FlagSpec): ParsedFlags {
  const numbers = new Map<string, number>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}`);
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const kind = spec[name];
    if (kind === undefined) throw new UsageError(`unknown flag --${name}`);
    if (kind === 'switch') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      switches.add(name);
      continue;
    }
    let text: string | undefined;
    if (eq !== -1) {
      text = arg.slice(eq + 1);
    } else {
      text = argv[i + 1];
      i++;
    }
    if (text === undefined || text === '' || text.startsWith('--')) throw new UsageError(`--${name} needs a number`);
    const value = Number(text.replaceAll('_', ''));
    if (!Number.isFinite(value)) throw new UsageError(`--${name} must be a number, got ${JSON.stringify(text)}`);
    if (numbers.has(name)) throw new UsageError(`--${name} is given twice`);
    numbers.set(name, value);
  }
  return { numbers, switches };
}
