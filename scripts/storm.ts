/** `npm run storm`: `retryproof storm` (cli/commands/storm.ts), as the walk-through runs it. */
import { runCliProcess } from '../cli/index.ts';

await runCliProcess(['storm', ...process.argv.slice(2)]);
