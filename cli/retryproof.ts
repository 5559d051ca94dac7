#!/usr/bin/env node
/**
 * The operator CLI's process. cli/retryproof.mjs (the package bin) runs this file: in a
 * checkout as TypeScript, which Node 24 strips; installed, compiled as
 * dist/cli/retryproof.js. See cli/main.ts for the commands and cli/commands/ for each one.
 */
import { runCliProcess } from './main.ts';

await runCliProcess(process.argv.slice(2));
