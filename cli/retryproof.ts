#!/usr/bin/env node
/**
 * The operator CLI, `retryproof` (package bin). Node 24 runs this TypeScript file
 * directly; `npx retryproof ...` finds Node 24 first on its PATH (the node@24 dev
 * dependency). See cli/main.ts for the commands and cli/commands/ for each one.
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
