/**
 * The shape of a CLI command. Each command is one module under cli/commands/ and one
 * row in the command table (cli/commands/index.ts); adding a command touches nothing else.
 */
import type { OptionSpecs } from './args.ts';
import type { AwsClients } from './aws-clients.ts';
import type { Target, TargetFlags } from './target.ts';

export interface CommandContext {
  /** `--json`: print one JSON document to stdout, the contract for scripts. */
  readonly json: boolean;
  /** The receiver named by --local or --stack (and --receiver); resolved on first use. */
  target(): Promise<Target>;
  /** The global flags that name the receiver, for a command that finds receivers itself (`receivers`). */
  readonly flags: TargetFlags;
  /** The AWS clients of deployed receivers. */
  readonly aws: AwsClients;
  /** Writes to stdout. */
  print(text: string): void;
  /**
   * A progress note on stderr: rewritten in place on a terminal, one line each otherwise, never
   * with --json. `whole`: a line of its own, never rewritten, for a wait whose terminal another
   * process (a stack started with `&`) writes to meanwhile.
   */
  progress(text: string, options?: { readonly whole?: boolean }): void;
  readonly now: () => number;
  /** The environment the CLI runs in (RETRYPROOF_LOCAL_DIR, AWS_REGION...). */
  readonly env: NodeJS.ProcessEnv;
}

export interface ParsedArgs {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

export interface Command {
  /** One or two words: `ledger`, `dlq list`. */
  readonly name: string;
  readonly summary: string;
  /** The usage line and the command's own flags, shown by `--help`. */
  readonly usage: string;
  /** The command's own flags, beside the global ones. */
  readonly options: OptionSpecs;
  /** Names of the positional arguments, all required. */
  readonly args: readonly string[];
  /**
   * Other commands' flags that mean one of this command's, so a flag typed under the other
   * name is pointed to this command's own: `{ since: 'window' }`. @default - none
   */
  readonly sameAs?: Readonly<Record<string, string>>;
  /** Rewrites the command's arguments before they are parsed (the storm's bare `--regions`). @default - none */
  readonly normalize?: (argv: readonly string[]) => string[];
  /** Returns the exit code (0 when undefined). */
  run(ctx: CommandContext, args: ParsedArgs): Promise<number | undefined>;
}
