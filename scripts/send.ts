/** `npm run send`: `retryproof send` (cli/commands/send.ts), as the walk-through runs it. */
import { runCliProcess } from '../cli/index.ts';

await runCliProcess(['send', ...process.argv.slice(2)]);
