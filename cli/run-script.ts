/**
 * The tail of every script entry point (`npm run send`, `npm run storm`): run `main`, turn
 * a usage error into exit 2 with the usage, a CLI error into exit 1, and let anything else
 * crash loudly, as a bug should.
 */
import { CliError, EXIT, UsageError } from './errors.ts';

export async function runScript(name: string, usage: string, main: (argv: string[]) => Promise<number>): Promise<void> {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${name}: ${err.message}\n\n${err.usage ?? usage}`);
      process.exitCode = EXIT.usage;
    } else if (err instanceof CliError) {
      console.error(`${name}: ${err.message}`);
      process.exitCode = EXIT.failed;
    } else {
      throw err;
    }
  }
}
