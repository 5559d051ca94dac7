/**
 * The measured log and metric figures (bench/log-bytes.json, written by bench/log-bytes.ts)
 * and the arithmetic that turns them into bytes per delivery. Kept apart from the measurement,
 * which starts DynamoDB Local and synthesizes the stack, so `npm run cost` reads them quickly.
 */
import { readFileSync } from 'node:fs';

export type LineKind = 'powertools' | 'emf' | 'other';

/** Lines and bytes (UTF-8, the newline included) of one kind, per unit of work. */
export interface LineFigure {
  readonly lines: number;
  readonly bytes: number;
}

export type KindFigures = Readonly<Record<LineKind, LineFigure>>;

/** What each function wrote, per unit of work. */
export interface MeasuredFunctions {
  /** Per new delivery (claimed, answered 202). */
  readonly ingestNew: KindFigures;
  /** Per duplicate (the answer replayed). */
  readonly ingestDuplicate: KindFigures;
  /** Per executor invocation, whatever its batch holds (the fixed part of a least-squares fit). */
  readonly executorInvocation: KindFigures;
  /** Per message of a batch (the slope of the fit). */
  readonly executorMessage: KindFigures;
  /** Per reconciler run. */
  readonly reconcilerRun: KindFigures;
}

/** A modelled line: its exact sample text, its size with the newline, and where the format comes from. */
export interface ModelledLine {
  readonly sample: string;
  readonly bytes: number;
  readonly source: string;
}

/** What the stack deploys that CloudWatch, KMS, Secrets Manager and X-Ray price, from its synthesized template. */
export interface StackInventory {
  readonly alarms: number;
  /** CloudWatch prices an alarm per metric it reads: a metric-math alarm counts each of its metrics. */
  readonly alarmMetrics: number;
  readonly dashboards: number;
  readonly kmsKeys: number;
  /** One per route: the route secrets the receiver ensures (Custom::RetryproofRouteSecret) or imports. */
  readonly secrets: number;
  readonly schedules: number;
  /** The functions with active X-Ray tracing. */
  readonly tracedFunctions: number;
  readonly logGroups: number;
  readonly logRetentionDays: readonly number[];
  readonly routes: number;
}

export interface LogBytesMeasurement {
  readonly measuredOn: string;
  /** How the functions ran: the environment lib/ sets, and what it leaves to Powertools' defaults. */
  readonly configuration: {
    readonly logLevel: string;
    readonly metricsNamespace: string;
    readonly route: string;
    readonly bodyBytes: number;
  };
  readonly scenario: { readonly newDeliveries: number; readonly duplicates: number; readonly executorInvocations: number; readonly reconcilerRuns: number };
  readonly functions: MeasuredFunctions;
  /**
   * Lambda's own START, END and REPORT lines (Text format), per invocation of any function; and
   * the XRAY line REPORT carries when the stack traces actively, absent when it does not. (In the
   * figures from before the cut, taken with tracing always on, REPORT holds the XRAY line.)
   */
  readonly platform: { readonly start: ModelledLine; readonly end: ModelledLine; readonly report: ModelledLine; readonly xray?: ModelledLine };
  /** The HTTP API's access log line in the format lib/stateless/webhook-api.ts configures, per request. */
  readonly accessLog: ModelledLine;
  /** gzip size / raw size of everything captured plus the modelled lines: a stand-in for CloudWatch's archive compression. */
  readonly compressionRatio: number;
  /**
   * Metric streams (namespace, name, dimension names and values) the run emitted, the route's
   * value written `<route>`: each is one custom metric a month per route it is emitted for.
   */
  readonly metricStreams: readonly string[];
  /** One example of each kind each function wrote, to show what is being paid for. */
  readonly samples: Readonly<Record<string, string>>;
  /** Absent from the figures taken before the cut, which priced logs only. */
  readonly stack?: StackInventory;
}

/** The figures as committed now, and as they were measured before the log cut of issue 26 (the same script, the code of commit 9b6097e). */
export const LOG_FIGURE_FILES = {
  current: new URL('./log-bytes.json', import.meta.url),
  beforeCut: new URL('./log-bytes-before-cut.json', import.meta.url),
} as const;

export function readLogFigures(file: URL): LogBytesMeasurement {
  return JSON.parse(readFileSync(file, 'utf8')) as LogBytesMeasurement;
}

/** Who wrote a line: a function, or the API Gateway stage. */
export type LogSource = 'ingest' | 'executor' | 'reconciler' | 'api';
/** What kind of line: the function's own (Powertools JSON, EMF), Lambda's, or the access log. */
export type LogLineKind = 'powertools' | 'emf' | 'other' | 'platform' | 'access';

export interface LogShare {
  readonly source: LogSource;
  readonly kind: LogLineKind;
  readonly bytesPerDelivery: number;
}

export interface LogBytesPerDelivery {
  /** Every line kind of every source, in bytes per delivery (duplicates included in the deliveries). */
  readonly shares: readonly LogShare[];
  readonly bySource: Readonly<Record<LogSource, number>>;
  /** What the functions' code writes (Powertools JSON, EMF, other): what the cut of issue 26 could change. */
  readonly functionsOwn: number;
  /** Everything CloudWatch Logs ingests per delivery: the functions' own lines, Lambda's, the access log. */
  readonly total: number;
}

export interface TrafficShape {
  readonly deliveriesPerMonth: number;
  readonly duplicateShare: number;
  /** Messages per executor invocation. */
  readonly batchFill: number;
  /** Reconciler runs a month (hourly: 730.5). */
  readonly reconcilerRunsPerMonth: number;
}

const KINDS: readonly LineKind[] = ['powertools', 'emf', 'other'];

/** Lambda's lines of one invocation as the measured stack writes them: START, END, REPORT and, traced, its XRAY line. */
export function platformBytesPerInvocation(m: LogBytesMeasurement): number {
  return m.platform.start.bytes + m.platform.end.bytes + m.platform.report.bytes + (m.platform.xray?.bytes ?? 0);
}

/** The measured figures as bytes per delivery at a traffic shape, each line kind of each source apart. */
export function logBytesPerDelivery(m: LogBytesMeasurement, t: TrafficShape): LogBytesPerDelivery {
  const f = m.functions;
  const fresh = 1 - t.duplicateShare;
  const platform = platformBytesPerInvocation(m);
  const reconcilerPerDelivery = t.deliveriesPerMonth === 0 ? 0 : t.reconcilerRunsPerMonth / t.deliveriesPerMonth;
  const shares: LogShare[] = [];
  for (const kind of KINDS) {
    shares.push({ source: 'ingest', kind, bytesPerDelivery: fresh * f.ingestNew[kind].bytes + t.duplicateShare * f.ingestDuplicate[kind].bytes });
  }
  shares.push({ source: 'ingest', kind: 'platform', bytesPerDelivery: platform });
  for (const kind of KINDS) {
    shares.push({ source: 'executor', kind, bytesPerDelivery: fresh * (f.executorMessage[kind].bytes + f.executorInvocation[kind].bytes / t.batchFill) });
  }
  shares.push({ source: 'executor', kind: 'platform', bytesPerDelivery: (fresh * platform) / t.batchFill });
  for (const kind of KINDS) shares.push({ source: 'reconciler', kind, bytesPerDelivery: f.reconcilerRun[kind].bytes * reconcilerPerDelivery });
  shares.push({ source: 'reconciler', kind: 'platform', bytesPerDelivery: platform * reconcilerPerDelivery });
  shares.push({ source: 'api', kind: 'access', bytesPerDelivery: m.accessLog.bytes });
  const bySource = { ingest: 0, executor: 0, reconciler: 0, api: 0 };
  for (const s of shares) bySource[s.source] += s.bytesPerDelivery;
  const functionsOwn = shares.filter((s) => s.source !== 'api' && s.kind !== 'platform').reduce((sum, s) => sum + s.bytesPerDelivery, 0);
  return { shares: shares.filter((s) => s.bytesPerDelivery > 0), bySource, functionsOwn, total: shares.reduce((sum, s) => sum + s.bytesPerDelivery, 0) };
}

/** Custom metrics a month: the streams the run emitted, those with a route dimension once per route. */
export function customMetricCount(m: LogBytesMeasurement, routes: number): number {
  return m.metricStreams.reduce((sum, stream) => sum + (stream.includes('route=<route>') ? routes : 1), 0);
}
