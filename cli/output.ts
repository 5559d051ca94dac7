/** Human output: aligned tables and short times. `--json` output never goes through here. */

/** `2026-11-29 14:49:03` in UTC, or `-`. */
export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** Cuts a cell to `width` characters, with an ellipsis. */
export function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** An aligned text table with a header row. */
export function table(columns: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map(line)].join('\n');
}
