#!/usr/bin/env node
/**
 * The operator CLI's process. cli/retryproof.mjs (the package bin) runs this file: in a
 * checkout as TypeScript, which Node 24 strips; installed, compiled as
 * dist/cli/retryproof.js. See cli/main.ts for the commands and cli/commands/ for each one.
 */
import { runCli } from './main.ts';

// Piped into `head` or `jq` that stopped reading: that is the reader's choice, not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stderrIsTty: process.stderr.isTTY,
  env: process.env,
});
