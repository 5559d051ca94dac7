/**
 * Flag parsing for the CLI and the scripts: node:util parseArgs, with every mistake turned
 * into a UsageError of one line that names the flag and, for a near miss, the flag meant;
 * and the few value types the commands take.
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.ts';
import { nearest } from './suggest.ts';

export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

type StrictValues<T extends OptionSpecs> = ReturnType<typeof parseArgs<{ options: T; allowPositionals: true; strict: true }>>['values'];

/** Every spelling of the flags in `options`: `--window`, `-h`. */
export function flagNames(options: OptionSpecs): string[] {
  return Object.entries(options).flatMap(([name, spec]) => [`--${name}`, ...(spec.short === undefined ? [] : [`-${spec.short}`])]);
}

/**
 * Parses `argv` against `options`. Unknown flags, missing values and values given to
 * switches are UsageErrors naming the flag; an unknown one gets "did you mean" when a known
 * flag is near, else `elsewhere(flag)` (where the flag does belong), when given. `--help`
 * wins over any mistake: asking for help is never an error.
 */
export function parseFlags<T extends OptionSpecs>(
  argv: readonly string[],
  options: T,
  usage?: string,
  elsewhere?: (flag: string) => string | undefined,
): { values: StrictValues<T>; positionals: string[] } {
  // Non-strict parsing yields every token, so each mistake can be explained on its own terms
  // (Node's strict messages are about positionals and `--`, not about the flag meant).
  const { values, positionals, tokens } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false, tokens: true });
  let mistake: string | undefined;
  for (const token of tokens) {
    if (token.kind !== 'option' || mistake !== undefined) continue;
    const spec = options[token.name];
    if (spec === undefined) {
      const near = nearest(token.rawName, flagNames(options));
      const hint = near === undefined ? elsewhere?.(token.rawName) : `did you mean ${near}?`;
      mistake = `unknown option ${token.rawName}${hint === undefined ? '' : `; ${hint}`}`;
    } else if (spec.type === 'string' && token.value === undefined) {
      mistake = `${token.rawName} needs a value`;
    } else if (spec.type === 'string' && token.inlineValue === false && /^-[^\d.]/.test(token.value)) {
      // `--window --json`: the value forgotten, not a value starting with a dash (that is `--window=-x`).
      mistake = `${token.rawName} needs a value, got the flag ${token.value} (write ${token.rawName}=${token.value} if that is the value)`;
    } else if (spec.type === 'boolean' && token.value !== undefined) {
      mistake = `${token.rawName} takes no value, got ${JSON.stringify(token.value)}`;
    }
  }
  const help = 'help' in options && tokens.some((t) => t.kind === 'option' && t.name === 'help');
  if (mistake !== undefined && !help) throw new UsageError(mistake, usage);
  if (help) return { values: { help: true } as unknown as StrictValues<T>, positionals };
  // Checked above: each string flag has a string, each switch is true.
  return { values, positionals };
}

/** A whole number within bounds, from a flag's text. */
export function intFlag(name: string, text: string | undefined, min: number, max: number, usage?: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`, usage);
  }
  return Number(text);
}

/** A number within bounds (fractions allowed), from a flag's text. */
export function numberFlag(name: string, text: string | undefined, min: number, max: number, usage?: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be a number from ${min} to ${max}, got ${JSON.stringify(text)}`, usage);
  }
  return value;
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration such as `90s`, `15m`, `24h` or `7d`, in milliseconds.
 * @param allowZero accept `0s` (a settle margin may be none at all) @default false
 */
export function durationFlag(name: string, text: string | undefined, usage?: string, allowZero = false): number | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  const unit = match?.[2] === undefined ? undefined : UNITS[match[2]];
  const value = Number(match?.[1]);
  if (match?.[1] === undefined || unit === undefined || value < 0 || (value === 0 && !allowZero)) {
    throw new UsageError(`--${name} must be a duration such as 90s, 15m, 24h or 7d, got ${JSON.stringify(text)}`, usage);
  }
  return Number(match[1]) * unit;
}
