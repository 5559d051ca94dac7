/**
 * The CLI's errors. Each maps to one exit code; its message is what the user reads,
 * one line, with what to do next.
 */

/** A bad command line: exit code 2, with the usage. */
export class UsageError extends Error {
  /** The usage text of the command that was misused; the general usage when absent. */
  readonly usage: string | undefined;
  constructor(message: string, usage?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UsageError';
    this.usage = usage;
  }
}

/** The command could not do its work (the stack is not running, AWS refused...): exit code 1. */
export class CliError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** The exit codes of the CLI and the scripts; the CLI's `--help` explains them (cli/main.ts). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
