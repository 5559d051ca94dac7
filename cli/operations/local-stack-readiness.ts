/**
 * Whether the local stack (`npm start`) is ready: its endpoints.json exists, names a live
 * process, and the gateway at its URL answers the admin call `GET /_local/status` from that
 * very process. The stack writes endpoints.json only once every part runs, so the file alone
 * would almost do; asking the gateway also catches a file left by another stack whose pid was
 * reused, and a gateway that is not listening yet. A stack of several Regions is ready when
 * every Region's gateway answers.
 */
import { ENDPOINTS_FILE, isAlive, localRegionsIn, readEndpointsFile, StackNotRunningError } from '../../local/index.ts';
import type { LocalEndpoints } from '../../local/index.ts';
import { CliError } from '../errors.ts';

export type Readiness = { readonly ready: true; readonly endpoints: LocalEndpoints } | { readonly ready: false; readonly reason: string };

/** How long one status call may take before the gateway counts as not answering. */
const STATUS_TIMEOUT_MS = 2000;

/** One look at the local stack in `dir`. Never throws: what is missing is the reason. */
export async function localStackReadiness(dir: string): Promise<Readiness> {
  let endpoints: LocalEndpoints | undefined;
  try {
    endpoints = await readEndpointsFile(dir);
  } catch (err) {
    // A broken file may yet be replaced by a starting stack: keep waiting, and say why.
    if (err instanceof StackNotRunningError) return { ready: false, reason: err.message };
    return { ready: false, reason: `${ENDPOINTS_FILE} cannot be read: ${(err as Error).message}` };
  }
  if (endpoints === undefined) return { ready: false, reason: `no ${ENDPOINTS_FILE} yet` };
  if (!isAlive(endpoints.pid)) return { ready: false, reason: `${ENDPOINTS_FILE} is a stopped stack's (pid ${endpoints.pid} is gone)` };
  for (const region of localRegionsIn(endpoints)) {
    const problem = await gatewayProblem(region.adminUrl, endpoints.pid);
    if (problem !== undefined) return { ready: false, reason: problem };
  }
  return { ready: true, endpoints };
}

/** Why the gateway at `url` is not yet the stack of `pid`'s, or undefined when it is. */
async function gatewayProblem(url: string, pid: number): Promise<string | undefined> {
  const statusUrl = `${url}/_local/status`;
  try {
    const answer = await fetch(statusUrl, { signal: AbortSignal.timeout(STATUS_TIMEOUT_MS) });
    const body = (await answer.json().catch(() => undefined)) as { pid?: unknown } | undefined;
    if (answer.status !== 200) return `GET ${statusUrl} answered ${answer.status}`;
    if (body?.pid !== pid) return `${url} is served by another process than pid ${pid}`;
    return undefined;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    return `the gateway at ${url} does not answer yet (${cause?.code ?? (err as Error).name})`;
  }
}

export interface WaitOptions {
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** Called after each look that found the stack not ready, with how long the wait has lasted. */
  readonly onWaiting?: (reason: string, waitedMs: number) => void;
  /** Between looks. @default 200 */
  readonly pollMs?: number;
}

/**
 * Waits until the local stack in `dir` is ready.
 * @throws CliError on timeout, with the last reason it was not ready
 */
export async function waitForLocalStack(dir: string, options: WaitOptions): Promise<{ endpoints: LocalEndpoints; waitedMs: number }> {
  const started = performance.now();
  const pollMs = options.pollMs ?? 200;
  for (;;) {
    const state = await localStackReadiness(dir);
    const waitedMs = performance.now() - started;
    if (state.ready) return { endpoints: state.endpoints, waitedMs };
    if (waitedMs >= options.timeoutMs) {
      throw new CliError(
        `the local stack in ${dir} was not ready within ${Math.round(options.timeoutMs / 1000)} s (${state.reason}): ` +
          'is npm start running with this RETRYPROOF_LOCAL_DIR? Its output says why it stopped; or wait longer with --timeout S',
      );
    }
    options.onWaiting?.(state.reason, waitedMs);
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, options.timeoutMs - waitedMs)));
  }
}
