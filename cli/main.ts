/**
 * The operator CLI's dispatcher: find the command in the table, parse the global and the
 * command's flags, connect to the stack, run, and turn errors into exit codes
 * (0 ok, 1 the work failed or found a problem, 2 a bad command line: see EXIT_CODES_HELP).
 */
import { parseArgs } from 'node:util';
import { flagNames, parseFlags } from './args.ts';
import { sdkClients } from './aws-clients.ts';
import type { AwsClients } from './aws-clients.ts';
import { awsFailureLine } from './aws-errors.ts';
import type { OptionSpecs } from './args.ts';
import type { Command, CommandContext } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { CliError, EXIT, UsageError } from './errors.ts';
import { nearest } from './suggest.ts';
import { resolveTarget } from './target.ts';
import type { Target, TargetFlags } from './target.ts';
import { usageExcerpt } from './usage-excerpt.ts';

export const GLOBAL_OPTIONS = {
  local: { type: 'boolean' },
  stack: { type: 'string' },
  receiver: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

/** What each exit code means; shown by `retryproof --help`. Keep in step with EXIT and the commands' returns. */
export const EXIT_CODES_HELP = `Exit codes:
  0  done (reconcile too when it lists findings: they are in its report)
  1  the work failed or found a problem: the stack is not running or not ready in time (wait),
     no such stack or receiver, no AWS credentials or an expired session, AWS refused or could not
     be reached, inspect found no record, a DLQ move task did not complete, order skip was refused
     (the head of the line is not FAILED)
  2  a bad command line, nothing done: an unknown command, flag or route, a bad value,
     a missing --local/--stack, a stack of several receivers without --receiver, or no AWS region`;

/** The synopsis and every command with its summary. */
function commandList(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `usage: retryproof <command> (--local [--region R] | --stack NAME [--receiver ID] [--region R]) [--json] [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}`;
}

/** The general help: every command, the global flags and the exit codes. */
export function generalUsage(commands: readonly Command[] = COMMANDS): string {
  return `${commandList(commands)}

Global flags:
  --local        the local stack (npm start), found through RETRYPROOF_LOCAL_DIR/endpoints.json (default .local/)
  --stack NAME   a deployed stack, found through CloudFormation: its receivers are the outputs that hold a
                 retryproof receiver descriptor (retryproof receivers lists them)
  --receiver ID  with --stack, which of the stack's receivers (its construct id, e.g. Webhooks);
                 needed only when the stack has several
  --region R     with --stack, the stack's AWS region (default: AWS_REGION, or the region of the AWS_PROFILE profile);
                 with --local, the local Region of a stack started with --regions: its queues, DLQ and gateway
                 (default: the first); the events table and the ledger are every Region's
  --json         one JSON document on stdout, for scripts
  -h, --help     help; \`retryproof <command> --help\` for a command's own flags

AWS credentials and region come from the SDK's default chain, as for the AWS CLI: AWS_PROFILE
(SSO profiles after aws sso login), AWS_REGION, ~/.aws/config and ~/.aws/credentials, or
AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN.

RETRYPROOF_DEBUG=1 adds the stack trace to an unexpected failure's one line.

${EXIT_CODES_HELP}`;
}

/** The help of a group of subcommands (`dlq`, `routes`). */
export function groupUsage(group: string, commands: readonly Command[] = COMMANDS): string {
  const members = commands.filter((c) => c.name.startsWith(`${group} `));
  const width = Math.max(...members.map((c) => c.name.length));
  return `usage: retryproof ${group} <subcommand> (--local [--region R] | --stack NAME [--region R]) [--json] [options]

Subcommands:
${members.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

\`retryproof ${group} <subcommand> --help\` for a subcommand's own flags; \`retryproof --help\` for the global flags and exit codes`;
}

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** True when stderr is a terminal (progress is rewritten in place). */
  readonly stderrIsTty: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly now?: () => number;
  /** The AWS clients of deployed receivers (tests give stubs). @default the SDK's, on the default chain of `env` */
  readonly aws?: Partial<AwsClients>;
}

/**
 * The command words of argv: what is neither a flag nor a global flag's value, before any `--`.
 * The command's own flags are not known yet, so the value of one (`--window 24h`) reads as a word.
 */
function commandWords(argv: readonly string[]): { word: string; index: number }[] {
  const { tokens } = parseArgs({ args: [...argv], options: GLOBAL_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const end = tokens.findIndex((t) => t.kind === 'option-terminator');
  return tokens.slice(0, end === -1 ? undefined : end).flatMap((t) => (t.kind === 'positional' && t.value !== '-' ? [{ word: t.value, index: t.index }] : []));
}

/** Finds the command: the longest name the first words spell. */
export function findCommand(
  argv: readonly string[],
  commands: readonly Command[] = COMMANDS,
): { command: Command; rest: string[] } | { group: string } | undefined {
  const words = commandWords(argv);
  for (const length of [2, 1]) {
    const name = words.slice(0, length).map((w) => w.word).join(' ');
    const command = words.length >= length ? commands.find((c) => c.name === name) : undefined;
    if (command !== undefined) {
      const used = new Set(words.slice(0, length).map((w) => w.index));
      return { command, rest: argv.filter((_, i) => !used.has(i)) };
    }
  }
  const first = words[0]?.word;
  if (first !== undefined && commands.some((c) => c.name.startsWith(`${first} `))) return { group: first };
  return undefined;
}

/** `--help` or `-h` before any `--`. */
function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((token) => token === '--help' || token === '-h');
}

/** "did you mean ...?" for a mistyped command word: a near command or group, or the group a bare subcommand belongs to. */
function commandHint(typed: string, commands: readonly Command[], group?: string): string {
  const names =
    group === undefined
      ? [...new Set(commands.map((c) => c.name.split(' ')[0] ?? c.name))]
      : commands.filter((c) => c.name.startsWith(`${group} `)).map((c) => c.name.slice(group.length + 1));
  const near = nearest(typed, names) ?? (group === undefined ? commands.find((c) => c.name.endsWith(` ${typed}`))?.name : undefined);
  return near === undefined ? '' : `; did you mean "${group === undefined ? near : `${group} ${near}`}"?`;
}

/**
 * Where else a flag unknown to this command belongs, so `dlq list --window` is explained, and
 * the command's own flag of the same meaning first: `ledger --since` is `ledger --window`.
 */
function ownersOf(flag: string, command: Command, commands: readonly Command[]): string | undefined {
  const owners = commands.filter((c) => flagNames(c.options).includes(flag)).map((c) => c.name);
  const where = owners.length === 0 ? undefined : `${flag} is a flag of ${owners.join(', ')}`;
  const own = command.sameAs?.[flag.replace(/^--/, '')];
  if (own === undefined) return where;
  return `did you mean --${own}?${where === undefined ? '' : ` (${where})`}`;
}

/** Runs the CLI on `argv` as this process, its exit code set: the bin's and the repository's scripts' entry. */
export async function runCliProcess(argv: readonly string[]): Promise<void> {
  // Piped into `head` or `jq` that stopped reading: that is the reader's choice, not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  process.exitCode = await runCli(argv, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stderrIsTty: process.stderr.isTTY,
    env: process.env,
  });
}

/** One line for a failure no command turned into a CliError: what happened, and what to try. */
export function failureLine(err: unknown, target: Target | undefined, env: NodeJS.ProcessEnv = {}): string {
  const aws = awsFailureLine(err, env);
  if (aws !== undefined) return aws;
  const e = err instanceof Error ? err : new Error(String(err));
  const what = `${e.name}: ${e.message.split('\n')[0] ?? ''}`;
  const code = (e as { code?: unknown; cause?: { code?: unknown } }).code ?? (e as { cause?: { code?: unknown } }).cause?.code;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || e.name === 'TimeoutError') {
    return target?.kind === 'local'
      ? `${what}: the local stack stopped answering; check npm start's output, or start it again`
      : `${what}: AWS could not be reached; check the network (and a proxy), then retry`;
  }
  return `${what} (unexpected: run again with RETRYPROOF_DEBUG=1 for the stack trace, and report it)`;
}

/** Answers a command line that names no command: the general or a group's help, or what was wrong with it. */
function withoutCommand(found: { group: string } | undefined, args: readonly string[], io: CliIo, commands: readonly Command[]): number {
  const words = commandWords(args);
  const wantsHelp = asksForHelp(args);
  if (wantsHelp && words.length === 0) {
    io.stdout(`${generalUsage(commands)}\n`);
    return EXIT.ok;
  }
  if (found !== undefined) {
    if (wantsHelp && words.length === 1) {
      io.stdout(`${groupUsage(found.group, commands)}\n`);
      return EXIT.ok;
    }
    const typed = words[1]?.word;
    const what =
      typed === undefined
        ? `"${found.group}" needs a subcommand: ${commands.filter((c) => c.name.startsWith(`${found.group} `)).map((c) => c.name).join(', ')}`
        : `unknown subcommand "${found.group} ${typed}"${commandHint(typed, commands, found.group)}`;
    io.stderr(`retryproof: ${what}\n\n${groupUsage(found.group, commands)}\n`);
    return EXIT.usage;
  }
  const what = words.length === 0 ? 'no command given' : `unknown command "${words[0]?.word ?? ''}"${commandHint(words[0]?.word ?? '', commands)}`;
  // The commands, not the whole help: the line that says what was wrong must stay in sight.
  io.stderr(`retryproof: ${what}\n\n${commandList(commands)}\n(retryproof --help for the global flags and exit codes)\n`);
  return EXIT.usage;
}

/**
 * The progress line on stderr: a terminal gets every step rewritten in place, a log file one
 * line a second at most. `end` shows the last progress as it finally stood (not a stale
 * `0/2 moved` above `moved 2 messages`) and ends a terminal's line: before a result, and at the end.
 */
function progressLine(io: CliIo): { show: CommandContext['progress']; end: () => void } {
  let progressShown = false;
  let lastProgress = '';
  /** The latest progress a log file was spared, shown before any result. */
  let pendingProgress: string | undefined;
  let lastProgressAt = Number.NEGATIVE_INFINITY;
  const end = (): void => {
    if (pendingProgress !== undefined) io.stderr(`${pendingProgress}\n`);
    pendingProgress = undefined;
    if (io.stderrIsTty && progressShown) io.stderr('\n');
    progressShown = false;
  };
  const show = (text: string, options?: { readonly whole?: boolean }): void => {
    if (text === lastProgress) return;
    if (options?.whole === true) {
      end();
      lastProgress = text;
      io.stderr(`${text}\n`);
      return;
    }
    const at = performance.now();
    lastProgress = text;
    if (!io.stderrIsTty && at - lastProgressAt < 1000) {
      pendingProgress = text;
      return;
    }
    pendingProgress = undefined;
    lastProgressAt = at;
    progressShown = true;
    io.stderr(io.stderrIsTty ? `\r\x1b[K${text}` : `${text}\n`);
  };
  return { show, end };
}

/** The global flags that name the receiver. */
function targetFlagsOf(values: Readonly<Record<string, string | boolean | undefined>>): TargetFlags {
  return {
    local: values.local === true,
    ...(typeof values.stack === 'string' ? { stack: values.stack } : {}),
    ...(typeof values.region === 'string' ? { region: values.region } : {}),
    ...(typeof values.receiver === 'string' ? { receiver: values.receiver } : {}),
  };
}

/** A command's failure as one line on stderr, and its exit code. */
function failureExit(err: unknown, command: Command, target: Target | undefined, io: CliIo): number {
  if (err instanceof UsageError) {
    const hint = `(retryproof ${command.name} --help for all its flags)`;
    io.stderr(`retryproof ${command.name}: ${err.message}\n\n${usageExcerpt(`usage: ${command.usage}`, err.message, hint)}\n`);
    return EXIT.usage;
  }
  if (err instanceof CliError) {
    io.stderr(`retryproof ${command.name}: ${err.message}\n`);
    return EXIT.failed;
  }
  // An SDK or network failure: one line, not a stack trace (unless asked for, to report a bug).
  io.stderr(`retryproof ${command.name}: ${failureLine(err, target, io.env)}\n`);
  if (io.env.RETRYPROOF_DEBUG === '1') io.stderr(`${(err as Error).stack ?? ''}\n`);
  return EXIT.failed;
}

/** Runs the CLI; returns the exit code. Never throws for a user's mistake. */
export async function runCli(argv: readonly string[], io: CliIo, commands: readonly Command[] = COMMANDS): Promise<number> {
  // `retryproof help [command]` reads as `retryproof [command] --help`.
  const helpWord = commandWords(argv)[0];
  const args = helpWord?.word === 'help' ? ['--help', ...argv.filter((_, i) => i !== helpWord.index)] : argv;
  const found = findCommand(args, commands);
  if (found === undefined || 'group' in found) return withoutCommand(found, args, io, commands);
  const { command, rest } = found;
  let target: Target | undefined;
  // A progress line rewritten in place has no newline of its own: the CLI ends it.
  const progress = progressLine(io);
  const aws: AwsClients = { ...sdkClients(io.env), ...io.aws };
  try {
    const { values, positionals } = parseFlags(command.normalize?.(rest) ?? rest, { ...GLOBAL_OPTIONS, ...command.options }, command.usage, (flag) => ownersOf(flag, command, commands));
    if (values.help === true) {
      io.stdout(`usage: ${command.usage}\n`);
      return EXIT.ok;
    }
    if (positionals.length !== command.args.length) {
      const expected = command.args.length === 0 ? 'no arguments' : command.args.map((a) => `<${a}>`).join(' ');
      throw new UsageError(`${command.name} takes ${expected}, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}`, command.usage);
    }
    const json = values.json === true;
    const flags = targetFlagsOf(values);
    const ctx: CommandContext = {
      json,
      now: io.now ?? Date.now,
      env: io.env,
      flags,
      aws,
      print: (text) => {
        progress.end();
        io.stdout(text);
      },
      progress: (text, options) => {
        if (!json) progress.show(text, options);
      },
      target: async () => {
        target ??= await resolveTarget(flags, io.env, aws);
        return target;
      },
    };
    return (await command.run(ctx, { values, positionals })) ?? EXIT.ok;
  } catch (err) {
    progress.end();
    return failureExit(err, command, target, io);
  } finally {
    progress.end();
    target?.close();
  }
}
