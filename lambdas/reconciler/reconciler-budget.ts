/**
 * The reconciler function's time, in one place: lib/webhook-receiver.ts deploys the function
 * with this timeout, lambda.ts gives each run its budget from what is left of it, and the
 * cursor's lease (reconcile-cursor.ts) and `npm run bench:reconcile` are sized from it.
 */

/** The reconciler function's timeout: Lambda ends an invocation there (the most it allows is 900 s). */
export const RECONCILER_TIMEOUT_SECONDS = 300;

/** What a run keeps after its budget: the report's log line, the metrics, the cursor's release. */
export const REPORT_RESERVE_MS = 15_000;

/** A scheduled run's budget in the deployed function: its timeout less the reserve. */
export const DEPLOYED_BUDGET_MS = RECONCILER_TIMEOUT_SECONDS * 1000 - REPORT_RESERVE_MS;

/**
 * The reconciler function's NODE_OPTIONS (lib/webhook-receiver.ts), which `npm run
 * bench:reconcile` starts its reconciler process with. Source maps, as every function has
 * them. A young generation of 8 MB semi-spaces: a run allocates a page's objects, holds them
 * across the awaits of its writes, then drops them; with V8's default semi-spaces the process
 * peaked at 260 MB RSS over a million records (151 MB of V8 heap for a live set under 80 MB),
 * with 8 MB at 128 MB over 300,000 (38 MB of heap), no slower. An old generation of 256 MB,
 * half the function's memory, whatever V8 would size it at: the measured figure is then the
 * deployed one.
 */
export const RECONCILER_NODE_OPTIONS = '--enable-source-maps --max-old-space-size=256 --max-semi-space-size=8';
