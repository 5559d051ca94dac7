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
