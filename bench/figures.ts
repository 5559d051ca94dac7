/** The headline figures of a run, per receiver, as the report and its goals read them. */
import type { BundleFigure, SdkMode } from './bundles.ts';
import { coldInitMs } from './bundles.ts';
import type { LoadWorkload, Measurements, MergedLoad } from './measurements.ts';
import { WORKLOADS } from './measurements.ts';
import { RECEIVER_NAMES } from './receivers/receiver.ts';
import type { ReceiverName } from './receivers/receiver.ts';
import { median, percentile } from './stats.ts';

export interface Figures {
  readonly requestsPerNew: Record<ReceiverName, number>;
  /** Derived from workload c: what its duplicates added to its new deliveries' requests. */
  readonly requestsPerDuplicate: Record<ReceiverName, number>;
  /** Counted in workload e: a retry after a lost answer, once the work is done. */
  readonly requestsPerRetry: Record<ReceiverName, number>;
  readonly requestsAtShare: Record<ReceiverName, number>;
  readonly p50: Record<LoadWorkload, Record<ReceiverName, number>>;
  readonly p99: Record<LoadWorkload, Record<ReceiverName, number>>;
  readonly throughput: Record<LoadWorkload, Record<ReceiverName, number>>;
  readonly cpuPerDelivery: Record<LoadWorkload, Record<ReceiverName, number>>;
  /** Storm: keys whose effect ran more than once, and the runs beyond the first. */
  readonly stormKeysTwice: Record<ReceiverName, number>;
  readonly stormExtra: Record<ReceiverName, number>;
  readonly bundleBytes: Record<SdkMode, Record<ReceiverName, number>>;
  readonly coldInit: Record<SdkMode, Record<ReceiverName, number>>;
  readonly coldInitFloor: Record<SdkMode, number>;
  readonly coldInitCpu: Record<SdkMode, Record<ReceiverName, number>>;
}

export function perReceiver(pick: (name: ReceiverName) => number): Record<ReceiverName, number> {
  return Object.fromEntries(RECEIVER_NAMES.map((n) => [n, pick(n)])) as Record<ReceiverName, number>;
}

function perWorkload(pick: (load: MergedLoad) => number, m: Measurements): Record<LoadWorkload, Record<ReceiverName, number>> {
  return Object.fromEntries(
    (Object.keys(WORKLOADS) as LoadWorkload[]).map((w) => [w, perReceiver((n) => pick(m.loads[w][n]))]),
  ) as Record<LoadWorkload, Record<ReceiverName, number>>;
}

export function bundleOf(m: Measurements, receiver: ReceiverName | 'floor', mode: SdkMode): BundleFigure {
  const b = m.bundles.find((x) => x.receiver === receiver && x.mode === mode);
  if (b === undefined) throw new Error(`no bundle figure for ${receiver} ${mode}`);
  return b;
}

/** DynamoDB requests per new delivery, counted on the wire: read from b, unique deliveries. */
export function requestsPerNewOf(b: MergedLoad): number {
  return b.requests / b.newDeliveries;
}

/** DynamoDB requests per duplicate, counted on the wire: read from e, a sender's retry once the work is done. */
export function requestsPerRetryOf(e: MergedLoad): number {
  return e.requests / e.duplicateDeliveries;
}

/** The handler calls' own CPU per delivery, ms; NaN for a workload whose calls overlapped (b, c). */
export function handlerCpuMsOf(load: MergedLoad): number {
  return load.handlerCpuMicros === undefined ? Number.NaN : load.handlerCpuMicros / 1000 / load.deliveries;
}

/** The headline figures of a run. */
export function figuresOf(m: Measurements): Figures {
  const perNew = perReceiver((n) => requestsPerNewOf(m.loads.b[n]));
  return {
    requestsPerNew: perNew,
    requestsPerDuplicate: perReceiver((n) => {
      const c = m.loads.c[n];
      return c.duplicateDeliveries === 0 ? Number.NaN : (c.requests - c.newDeliveries * perNew[n]) / c.duplicateDeliveries;
    }),
    requestsPerRetry: perReceiver((n) => requestsPerRetryOf(m.loads.e[n])),
    requestsAtShare: perReceiver((n) => m.loads.c[n].requests / m.loads.c[n].deliveries),
    p50: perWorkload((l) => percentile(l.latenciesMs, 50), m),
    p99: perWorkload((l) => percentile(l.latenciesMs, 99), m),
    throughput: perWorkload((l) => l.deliveries / (l.wallMs / 1000), m),
    cpuPerDelivery: perWorkload((l) => l.cpuMicros / l.deliveries, m),
    stormKeysTwice: perReceiver((n) => (n === 'retryproof' ? (m.storm[n].executed?.keysMoreThanOnce ?? Number.NaN) : m.storm[n].decided.keysMoreThanOnce)),
    stormExtra: perReceiver((n) => (n === 'retryproof' ? (m.storm[n].executed?.extra ?? Number.NaN) : m.storm[n].decided.extra)),
    bundleBytes: {
      'sdk-bundled': perReceiver((n) => bundleOf(m, n, 'sdk-bundled').bytes),
      'sdk-external': perReceiver((n) => bundleOf(m, n, 'sdk-external').bytes),
    },
    coldInit: {
      'sdk-bundled': perReceiver((n) => coldInitMs(bundleOf(m, n, 'sdk-bundled'))),
      'sdk-external': perReceiver((n) => coldInitMs(bundleOf(m, n, 'sdk-external'))),
    },
    coldInitCpu: {
      'sdk-bundled': perReceiver((n) => median(bundleOf(m, n, 'sdk-bundled').initCpuMs)),
      'sdk-external': perReceiver((n) => median(bundleOf(m, n, 'sdk-external').initCpuMs)),
    },
    coldInitFloor: {
      'sdk-bundled': coldInitMs(bundleOf(m, 'floor', 'sdk-bundled')),
      'sdk-external': coldInitMs(bundleOf(m, 'floor', 'sdk-external')),
    },
  };
}

