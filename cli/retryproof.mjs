#!/usr/bin/env node
// The `retryproof` command (package bin). Installed, it runs the compiled CLI in
// dist/cli/: Node strips no types under node_modules, so the package ships JavaScript. In a
// checkout of the repository it runs the TypeScript sources (cli/retryproof.ts) as before, so
// an edit takes effect without a build; a checkout without them (or with only dist/) runs dist.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('./retryproof.ts', import.meta.url);
const compiled = new URL('../dist/cli/retryproof.js', import.meta.url);
const installed = fileURLToPath(import.meta.url).split(/[\\/]/).includes('node_modules');
// Node 22.18 and newer strip types by default; an older Node runs the compiled CLI when there is one.
const stripsTypes = Boolean(process.features.typescript);
const entry = !installed && existsSync(source) && stripsTypes ? source : compiled;

if (!existsSync(entry)) {
  console.error(
    !installed && existsSync(source)
      ? `retryproof: the CLI's sources are TypeScript, which Node ${process.version} does not run (22.18 or newer strips types): ` +
          'run it as npx retryproof, which finds Node 24 (the node@24 devDependency npm ci installs), or npm run build first'
      : `retryproof: ${fileURLToPath(compiled)} is missing: reinstall the package, or run npm run build in the repository`,
  );
  process.exit(2);
}
await import(entry.href);
