/**
 * The benchmark's slow route's action: records its start, then waits as long as the benchmark
 * says (a downstream that takes 20 s), and stops at the deadline's signal, as an action must.
 */
import type { ActionContext } from '../../lambdas/actions/action.ts';
import { isolationRecorder, recordStart } from './isolation-recorder.ts';

export default async function slowAction(ctx: ActionContext): Promise<{ ok: true }> {
  const ended = recordStart(ctx.route, ctx.key, ctx.attempt);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, isolationRecorder.slowActionMs);
    ctx.signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
  ended();
  return { ok: true };
}
