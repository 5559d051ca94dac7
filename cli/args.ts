/**
 * Flag parsing for the CLI and the scripts: node:util parseArgs in strict mode, with its
 * errors turned into UsageErrors, and the few value types the commands take.
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.ts';

export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

/** Parses `argv` against `options`; unknown flags and missing values are UsageErrors. */
export function parseFlags<T extends OptionSpecs>(
  argv: readonly string[],
  options: T,
  usage?: string,
): { values: ReturnType<typeof parseArgs<{ options: T; allowPositionals: true; strict: true }>>['values']; positionals: string[] } {
  try {
    const parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (err) {
    // parseArgs explains itself well; keep its first sentence, without Node's error-code prefix.
    const message = (err as Error).message.split('\n')[0] ?? 'bad arguments';
    throw new UsageError(message.replace(/^TypeError \[[A-Z_]+\]: /, ''), usage);
  }
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
