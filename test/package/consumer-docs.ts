/**
 * The consumer steps of docs/construct.md, "Use it in your own CDK app", as the package test
 * reads them: every fenced block marked `<!-- consumer: NAME -->` (on the line before the
 * fence, or before the block's `<!-- not runnable: … -->` mark). A NAME with a dot or a slash
 * is a file the reader writes, whole; any other NAME (`install`, `synth`, `local`) is a
 * shell block of commands the reader runs.
 */

/** One marked block of the page. */
export interface ConsumerBlock {
  readonly name: string;
  readonly language: string;
  readonly text: string;
}

const MARKED_BLOCK = /^<!-- consumer: (\S+) -->\n(?:<!-- not runnable: [^\n]*-->\n)?```(\w*)\n([\s\S]*?)\n```$/gm;

/** Every marked block, in page order. */
export function consumerBlocks(markdown: string): ConsumerBlock[] {
  return [...markdown.matchAll(MARKED_BLOCK)].map((m) => ({ name: m[1] ?? '', language: m[2] ?? '', text: `${m[3] ?? ''}\n` }));
}

/** Whether a block is a file to write (its name is a path) rather than commands to run. */
export function isFileBlock(block: ConsumerBlock): boolean {
  return /[./]/.test(block.name);
}

/** The commands of a shell block, one a line, without blank lines. */
export function commandsOf(block: ConsumerBlock): string[] {
  return block.text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
