/** The route-by-route sweep of the sparse index that the parked and stranded phases share. */
import type { ResolvedRoute } from '../config/resolve-config.ts';
import type { EventRecord } from '../domain/event-record.ts';
import type { RecordRef } from '../ports/execution-store.ts';
import type { ReconcilePosition } from '../ports/reconciler-store.ts';
import { refOf } from './reconcile-run.ts';
import type { ReconcileRun } from './reconcile-run.ts';

/**
 * One route-by-route sweep of the sparse index (parked, or stranded), from the run's start when
 * it begins inside it. Undefined once done, or the position it stopped at.
 */
export async function sweepIndex(
  run: ReconcileRun,
  phase: 'parked' | 'stranded',
  list: (route: string, after: RecordRef | undefined) => AsyncIterable<readonly EventRecord[]>,
  handle: (route: ResolvedRoute, record: EventRecord) => Promise<void>,
): Promise<ReconcilePosition | undefined> {
  const { routes, start } = run;
  const from = start.phase === phase ? start : undefined;
  for (let i = from === undefined ? 0 : Math.max(0, routes.findIndex((r) => r.name === from.route)); i < routes.length; i++) {
    const route = routes[i] as ResolvedRoute;
    let after = from?.route === route.name ? from.after : undefined;
    const here = (): ReconcilePosition => ({ phase, route: route.name, ...(after === undefined ? {} : { after }) });
    if (run.overBudget()) return here();
    for await (const page of list(route.name, after)) {
      for (const record of page) {
        if (run.overBudget()) return here();
        await handle(route, record);
        after = refOf(record);
      }
      if (!(await run.checkpoint(here()))) return here();
    }
  }
  return undefined;
}
