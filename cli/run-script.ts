/**
 * The tail of a script entry point (`npm run simulate`, `npm run fuzz`): run `main`, turn
 * a usage error into exit 2 with an excerpt of the usage, a CLI error into exit 1, and let
 * anything else crash loudly, as a bug should.
 */
import { CliError, EXIT, UsageError } from './errors.ts';
import { usageExcerpt } from './usage-excerpt.ts';

/** Runs a script's `main` on the process's arguments and sets the exit code (0, 1 or 2). */
export async function runScript(name: string, usage: string, main: (argv: string[]) => Promise<number>): Promise<void> {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      const hint = `(npm run ${name} -- --help for every option)`;
      console.error(`${name}: ${err.message}\n\n${usageExcerpt(err.usage ?? usage, err.message, hint)}`);
      process.exitCode = EXIT.usage;
    } else if (err instanceof CliError) {
      console.error(`${name}: ${err.message}`);
      process.exitCode = EXIT.failed;
    } else {
      throw err;
    }
  }
}
