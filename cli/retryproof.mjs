#!/usr/bin/env node
// The `retryproof` command (package bin). The operator CLI is TypeScript that Node 24 runs
// from a checkout of this repository (cli/retryproof.ts); an installed package holds the
// WebhookReceiver construct only, and Node strips no types under node_modules.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('./retryproof.ts', import.meta.url);
if (fileURLToPath(cli).includes('/node_modules/') || !existsSync(cli)) {
  console.error(
    'retryproof: the operator CLI runs from a checkout of the retryproof repository (npx retryproof there); ' +
      'this installed package holds the WebhookReceiver construct only',
  );
  process.exit(2);
}
await import(cli.href);
