/**
 * The operator CLI's dispatcher: find the command in the table, parse the global and the
 * command's flags, connect to the stack, run, and turn errors into exit codes
 * (0 ok, 1 the work failed, 2 a bad command line).
 */
import { parseFlags } from './args.ts';
import type { OptionSpecs } from './args.ts';
import type { Command, CommandContext } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { CliError, EXIT, UsageError } from './errors.ts';
import { resolveTarget } from './target.ts';
import type { Target } from './target.ts';

export const GLOBAL_OPTIONS = {
  local: { type: 'boolean' },
  stack: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

/** Global flags that take a value: their value is not a command word. */
const VALUE_FLAGS: ReadonlySet<string> = new Set(['--stack', '--region']);

export function generalUsage(commands: readonly Command[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `usage: retryproof <command> (--local | --stack NAME [--region R]) [--json] [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Global flags:
  --local        the local stack (npm start), found through RETRYPROOF_LOCAL_DIR/endpoints.json (default .local/)
  --stack NAME   a deployed stack, found through CloudFormation (region and credentials: the usual AWS chain)
  --region R     the deployed stack's region
  --json         one JSON document on stdout, for scripts
  -h, --help     help; \`retryproof <command> --help\` for a command's own flags`;
}

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** True when stderr is a terminal (progress is rewritten in place). */
  readonly stderrIsTty: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly now?: () => number;
}

/** The command words of argv: what is neither a flag nor a flag's value. */
function commandWords(argv: readonly string[]): { word: string; index: number }[] {
  const words: { word: string; index: number }[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? '';
    if (token === '--') break;
    if (token.startsWith('-')) {
      if (VALUE_FLAGS.has(token)) i++;
      continue;
    }
    words.push({ word: token, index: i });
  }
  return words;
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

/** Runs the CLI; returns the exit code. Never throws for a user's mistake. */
export async function runCli(argv: readonly string[], io: CliIo, commands: readonly Command[] = COMMANDS): Promise<number> {
  const found = findCommand(argv, commands);
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  if (found === undefined || 'group' in found) {
    const words = commandWords(argv);
    if (words.length === 0 && wantsHelp) {
      io.stdout(`${generalUsage(commands)}\n`);
      return EXIT.ok;
    }
    const what =
      found !== undefined
        ? `"${found.group}" needs a subcommand: ${commands.filter((c) => c.name.startsWith(`${found.group} `)).map((c) => c.name).join(', ')}`
        : words.length === 0
          ? 'no command given'
          : `unknown command "${words[0]?.word ?? ''}"`;
    io.stderr(`retryproof: ${what}\n\n${generalUsage(commands)}\n`);
    return EXIT.usage;
  }
  const { command, rest } = found;
  let target: Target | undefined;
  try {
    const { values, positionals } = parseFlags(rest, { ...GLOBAL_OPTIONS, ...command.options }, command.usage);
    if (values.help === true) {
      io.stdout(`usage: ${command.usage}\n`);
      return EXIT.ok;
    }
    if (positionals.length !== command.args.length) {
      const expected = command.args.length === 0 ? 'no arguments' : command.args.map((a) => `<${a}>`).join(' ');
      throw new UsageError(`${command.name} takes ${expected}, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}`, command.usage);
    }
    const json = values.json === true;
    let lastProgress = '';
    let lastProgressAt = Number.NEGATIVE_INFINITY;
    const ctx: CommandContext = {
      json,
      now: io.now ?? Date.now,
      print: io.stdout,
      progress: (text) => {
        if (json || text === lastProgress) return;
        // A terminal gets every step, rewritten in place; a log file one line a second at most.
        const at = performance.now();
        if (!io.stderrIsTty && at - lastProgressAt < 1000) return;
        lastProgress = text;
        lastProgressAt = at;
        io.stderr(io.stderrIsTty ? `\r\x1b[K${text}` : `${text}\n`);
      },
      target: async () => {
        target ??= await resolveTarget(
          {
            local: values.local === true,
            ...(typeof values.stack === 'string' ? { stack: values.stack } : {}),
            ...(typeof values.region === 'string' ? { region: values.region } : {}),
          },
          io.env,
        );
        return target;
      },
    };
    const code = (await command.run(ctx, { values, positionals })) ?? EXIT.ok;
    if (io.stderrIsTty && lastProgress !== '') io.stderr('\n');
    return code;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`retryproof ${command.name}: ${err.message}\n\nusage: ${err.usage ?? command.usage}\n`);
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      io.stderr(`retryproof ${command.name}: ${err.message}\n`);
      return EXIT.failed;
    }
    // An SDK or network failure: one line, not a stack trace.
    const e = err as Error;
    io.stderr(`retryproof ${command.name}: ${e.name}: ${e.message}\n`);
    return EXIT.failed;
  } finally {
    target?.close();
  }
}
