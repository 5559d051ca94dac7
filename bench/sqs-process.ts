/**
 * fauxqs in a process of its own, so the emulator's CPU does not share the event loop of
 * the handlers under measurement. Prints its endpoint as one JSON line, and stops when its
 * standard input closes (its parent ended, normally or not).
 *
 *   npx node bench/sqs-process.ts
 */
import { startLocalSqs } from '../local/local-aws.ts';

const sqs = await startLocalSqs();
process.stdout.write(`${JSON.stringify({ endpoint: sqs.endpoint })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void sqs.stop().then(() => process.exit(0));
});
