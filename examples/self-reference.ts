/**
 * In this repository only: lets Node resolve `retryproof` and `retryproof/actions` to their
 * sources, as a project that installed the package resolves them to the package. The package's
 * "exports" name dist/, which a checkout has not built; this resolve hook (Node's synchronous
 * module.registerHooks, Node 22.15 and later) answers the two names with the source files and
 * leaves every other import to Node. The examples' cdk.json load it (`node --import
 * ../self-reference.ts app.ts`); so does the local stack, with
 * `NODE_OPTIONS=--import=./examples/self-reference.ts npm start -- --config examples/...`.
 * vitest has the same two aliases (vitest.config.ts), and esbuild gets them from the construct
 * (lib/stateless/retryproof-function.ts).
 */
import { registerHooks } from 'node:module';

const SOURCES: Readonly<Record<string, string>> = {
  retryproof: new URL('../lib/index.ts', import.meta.url).href,
  'retryproof/actions': new URL('../lambdas/actions/index.ts', import.meta.url).href,
};

registerHooks({
  resolve(specifier, context, nextResolve) {
    const url = SOURCES[specifier];
    return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
  },
});
