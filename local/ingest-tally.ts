/**
 * The local stack's stand-in for the ingest's CloudWatch metrics: the duplicates and breaker trips
 * of each route, counted per minute over the last day from the metrics the ingest emits anyway
 * (DuplicatesIntercepted, BreakerTripped), as CloudWatch would sum them. The ingest's code is not
 * touched: the local stack hands it a Metrics whose flush counts instead of printing (the local
 * stack prints no EMF). The console's overview reads the sums at GET /_local/ingest-counts.
 */
import { INGEST_METRIC, METRICS_NAMESPACE, SERVICE } from '../lambdas/observability/metric-catalogue.ts';
import { QuietMetrics } from '../lambdas/observability/powertools.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** What the tally counts, by the metric it counts. */
const COUNTED = { [INGEST_METRIC.duplicates]: 'duplicates', [INGEST_METRIC.breakerTripped]: 'breakerTrips' } as const;
type Counted = (typeof COUNTED)[keyof typeof COUNTED];

/** A route's sums over the last hour and the last day. */
export interface IngestCounts {
  readonly hour: Readonly<Record<Counted, number>>;
  readonly day: Readonly<Record<Counted, number>>;
}

/** Per route, per minute: the counts of the last day. */
export class IngestTally {
  readonly #minutes = new Map<string, Map<number, Record<Counted, number>>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  add(route: string, what: Counted, value: number): void {
    const minute = Math.floor(this.#now() / MINUTE_MS);
    const byMinute = this.#minutes.get(route) ?? new Map<number, Record<Counted, number>>();
    this.#minutes.set(route, byMinute);
    const counts = byMinute.get(minute) ?? { duplicates: 0, breakerTrips: 0 };
    counts[what] += value;
    byMinute.set(minute, counts);
    for (const old of byMinute.keys()) if (old <= minute - DAY_MS / MINUTE_MS) byMinute.delete(old);
  }

  /** Each route's sums over the last hour and day, to the minute (as a CloudWatch period of 60 s). */
  counts(): Record<string, IngestCounts> {
    const minute = Math.floor(this.#now() / MINUTE_MS);
    const out: Record<string, IngestCounts> = {};
    for (const [route, byMinute] of this.#minutes) {
      const hour = { duplicates: 0, breakerTrips: 0 };
      const day = { duplicates: 0, breakerTrips: 0 };
      for (const [at, c] of byMinute) {
        if (at <= minute - DAY_MS / MINUTE_MS) continue;
        day.duplicates += c.duplicates;
        day.breakerTrips += c.breakerTrips;
        if (at > minute - HOUR_MS / MINUTE_MS) {
          hour.duplicates += c.duplicates;
          hour.breakerTrips += c.breakerTrips;
        }
      }
      out[route] = { hour, day };
    }
    return out;
  }
}

/** The ingest's Metrics on the local stack: each flush adds the invocation's counted metrics to `tally`. */
export class TallyMetrics extends QuietMetrics {
  readonly #tally: IngestTally;
  #route = 'unknown';
  readonly #pending: { what: Counted; value: number }[] = [];

  constructor(tally: IngestTally) {
    super({ namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE, serviceName: SERVICE.ingest });
    this.#tally = tally;
  }

  override addDimension(name: string, value: string): this {
    if (name === 'route') this.#route = value;
    return super.addDimension(name, value);
  }

  override addMetric(...args: Parameters<QuietMetrics['addMetric']>): this {
    const [name, , value] = args;
    const what = (COUNTED as Record<string, Counted | undefined>)[name];
    if (what !== undefined) this.#pending.push({ what, value });
    return super.addMetric(...args);
  }

  override publishStoredMetrics(): this {
    for (const p of this.#pending.splice(0)) this.#tally.add(this.#route, p.what, p.value);
    this.#route = 'unknown';
    return super.publishStoredMetrics();
  }
}
