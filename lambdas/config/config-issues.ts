/**
 * Turns what the configuration schema found into the sentences a user reads: each names
 * where (the route, the section or `config`), the field, and the value it got.
 */
import type { BaseIssue, IssuePathItem } from 'valibot';
import { RESIGNED_PER_RETRY } from '../domain/idempotency-key.ts';

/** The value as a user wrote it, short enough for one line of an error message. */
export function shown(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function') return String(value);
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** "must be <rule>, got <value>": the message of a schema or check that refuses a value. */
export function must(rule: string): (issue: BaseIssue<unknown>) => string {
  return (issue) => `must be ${rule}, got ${shown(issue.input)}`;
}

/**
 * Why a key template that reads a header re-signed on every retry is refused: the sender signs
 * each retry afresh with a new timestamp, so each retry would be a new key and a new effect.
 */
export function perRetryMessage(template: string, headers: readonly string[]): string {
  const who = [...new Set(headers.map((h) => RESIGNED_PER_RETRY[h] ?? 'the sender'))].join(' and ');
  return (
    `${shown(template)} reads ${headers.join(', ')}, which the sender signs afresh on every retry, with a new timestamp (${who}): ` +
    `every retry would be a new key, and run again. Key the event by what stays the same on every retry ` +
    `({body:/pointer} fields, {header:webhook-id} on Standard Webhooks), or leave key unset (the scheme's default key)`
  );
}

/**
 * The message of a strict object's issues: a key it does not know (with the closest known
 * key when one is near, since the usual cause is a typo), a required key that is missing,
 * or a value that is no object at all.
 */
export function objectMessage(keys: readonly string[], what: string): (issue: BaseIssue<unknown>) => string {
  return (issue) => {
    if (issue.expected === 'never') {
      const near = closest(String(issue.input), keys);
      return near === undefined ? `is not a known key (the keys are: ${keys.join(', ')})` : `is not a known key (did you mean ${near}?)`;
    }
    if (isMissingKey(issue)) return 'is required';
    return `must be ${what}, got ${shown(issue.input)}`;
  };
}

/** A strict object's issue for a required key that is absent (valibot expects its quoted name). */
function isMissingKey(issue: BaseIssue<unknown>): boolean {
  return issue.input === undefined && issue.expected?.startsWith('"') === true;
}

/**
 * The known key nearest to a misspelt one, by edit distance (a key cut short, like
 * `tolerance` for `toleranceSeconds`, counts as near); undefined when none is close.
 */
export function closest(key: string, keys: readonly string[]): string | undefined {
  const typed = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of keys) {
    const known = candidate.toLowerCase();
    const cutShort = typed.length >= 4 && known.startsWith(typed);
    const distance = cutShort ? 1 : editDistance(typed, known);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** `a.b[2].c` from path items: keys with dots, array indexes in brackets. */
function dotted(items: readonly IssuePathItem[]): string {
  return items.reduce<string>((text, item) => {
    if (item.type === 'array') return `${text}[${String(item.key)}]`;
    const key = String(item.key);
    return text === '' ? key : `${text}.${key}`;
  }, '');
}

/**
 * One line for one issue: `route "stripe": breakerThreshold must be an integer >= 2, got 1`.
 * A route is named by its name, or by its place (`routes[1]`) when it has none or the issue
 * is its name; a value of the wrong type inside a named route also gives its full path,
 * which locates it in a configuration read from JSON.
 */
export function issueLine(issue: BaseIssue<unknown>): string {
  const path = issue.path ?? [];
  const [first, second] = path;
  if (first === undefined) return `config ${issue.message}`;
  if (first.key === 'routes' && second?.type === 'array' && path.length > 2) {
    const route = second.value as { name?: unknown } | null | undefined;
    const name = typeof route === 'object' && route !== null ? route.name : undefined;
    const field = dotted(path.slice(2));
    if (typeof name !== 'string' || name === '' || field === 'name') return `${dotted(path.slice(0, 2))}: ${field} ${issue.message}`;
    const typeMismatch = issue.kind === 'schema' && issue.expected !== 'never' && !isMissingKey(issue);
    return `route ${JSON.stringify(name)}: ${field} ${issue.message}${typeMismatch ? ` (at ${dotted(path)})` : ''}`;
  }
  if (first.key === 'actions' && path.length > 1) {
    const action = path[1];
    if (action?.type === 'object' && action.origin === 'key') return `actions: name ${issue.message}`;
    if (path.length > 2) return `action ${JSON.stringify(action?.key)}: ${dotted(path.slice(2))} ${issue.message}`;
  }
  const section = ['queue', 'reconciliation', 'api', 'alarms', 'actions'];
  if (path.length > 1 && section.includes(String(first.key))) {
    return `${String(first.key)}: ${dotted(path.slice(1))} ${issue.message}`;
  }
  return `config: ${dotted(path)} ${issue.message}`;
}
