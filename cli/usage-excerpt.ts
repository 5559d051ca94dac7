/**
 * What a usage error shows under its one-line message: the command's synopsis and the
 * lines that document the flags the message names, not the whole help. The storm's help is
 * thirty lines; the one line that was wrong must not scroll away under it.
 */

/** The flags a usage line documents: the words before its description (`--url URL --secret S`). */
function documentedFlags(line: string): string[] {
  const match = /^\s+(-\S.*?)(?:\s{2,}|$)/.exec(line);
  if (match?.[1] === undefined) return [];
  return match[1].split(/[\s,]+/).filter((word) => word.startsWith('-'));
}

/**
 * The usage's first line, the lines documenting any flag `message` names, and `helpHint`.
 * @param usage the full usage text, its first line the synopsis (`usage: ...`)
 */
export function usageExcerpt(usage: string, message: string, helpHint: string): string {
  const [synopsis = '', ...rest] = usage.split('\n');
  const named = new Set(message.match(/--?[a-z][a-z-]*/gi) ?? []);
  const documenting = rest.filter((line) => documentedFlags(line).some((flag) => named.has(flag)));
  return [synopsis, ...documenting, helpHint].join('\n');
}
