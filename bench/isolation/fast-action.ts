/** The benchmark's fast route's action: records its run and returns at once. */
import type { ActionContext } from '../../lambdas/actions/action.ts';
import { recordStart } from './isolation-recorder.ts';

export default function fastAction(ctx: ActionContext): Promise<{ ok: true }> {
  recordStart(ctx.route, ctx.key, ctx.attempt)();
  return Promise.resolve({ ok: true });
}
