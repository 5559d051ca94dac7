/**
 * The figures `npm run bench -- --json` prints: one object whose keys stay put, since tools
 * read it. retryproof's pipeline (its ingest, then its executor) and Powertools' (the
 * makeHandlerIdempotent ingest, then the Powertools SQS consumer) are measured the same way in
 * the same run; `ratios` mirrors them key by key, retryproof over Powertools. A figure the run
 * could not give is null, and so is its ratio.
 */
import type { ExecutorMeasurements } from './executor-figures.ts';
import { handlerCpuMsOf, requestsPerNewOf, requestsPerRetryOf } from './figures.ts';
import type { Measurements, MergedLoad } from './measurements.ts';
import { percentile } from './stats.ts';

export const JSON_PEERS = ['retryproof', 'powertools'] as const;
export type JsonPeer = (typeof JSON_PEERS)[number];

/** What the JSON reads from a run: workloads a, b and e, e's write units, and the executor benchmark. */
export interface JsonMeasurements {
  readonly loads: Readonly<Record<'a' | 'b' | 'e', Readonly<Record<JsonPeer, MergedLoad>>>>;
  readonly writeUnits: Measurements['writeUnits'];
  readonly powertoolsWriteUnits: Measurements['powertoolsWriteUnits'];
  readonly executors: ExecutorMeasurements;
}

/** A number, or null where the run could not give it. */
export type JsonFigure = number | null;

/** One pipeline's figures. Each is per unit named, measured in the workload or scenario named. */
export interface PipelineFigures {
  /** DynamoDB requests of the ingest per new delivery (b: unique deliveries), counted on the wire. */
  readonly ingestRequestsPerNewDelivery: JsonFigure;
  /** DynamoDB requests of the ingest per duplicate (e: a sender's retry after a lost answer, once the work is done). */
  readonly ingestRequestsPerDuplicate: JsonFigure;
  /** Write units over a new delivery's whole life, ingest and worker, index copies included (e: 2 KB bodies, DynamoDB Local's ConsumedCapacity). */
  readonly writeUnitsPerDeliveryLife: JsonFigure;
  /** Node CPU of the ingest handler's calls per new delivery, ms (a: one delivery at a time, process.cpuUsage around each call). */
  readonly ingestCpuMsPerDelivery: JsonFigure;
  /** The same per duplicate (e: a sender's retry once the work is done, one at a time). */
  readonly ingestCpuMsPerDuplicate: JsonFigure;
  /** The ingest's answer p50 at concurrency 16, ms (b). */
  readonly c16P50Ms: JsonFigure;
  /** The worker's DynamoDB requests per executed message, in three of the executor benchmark's scenarios. */
  readonly executorRequestsPerMessage: { readonly rest: JsonFigure; readonly backlog: JsonFigure; readonly storm: JsonFigure };
  /** The worker process's CPU per executed message, ms (backlog, batches of 10). */
  readonly executorCpuMsPerMessage: JsonFigure;
  /** From the work's SendMessage to its effect, p50, ms: at rest, and under the 30% duplicate storm. */
  readonly acceptToEffectP50Ms: { readonly rest: JsonFigure; readonly storm: JsonFigure };
}

export interface BenchJson {
  readonly retryproof: PipelineFigures;
  readonly powertools: PipelineFigures;
  /** retryproof / Powertools, key by key. */
  readonly ratios: PipelineFigures;
}

const figure = (n: number | undefined): JsonFigure => (n !== undefined && Number.isFinite(n) ? n : null);

function pipelineFigures(m: JsonMeasurements, peer: JsonPeer): PipelineFigures {
  const executor = (scenario: 'backlog' | 'rest' | 'storm'): ExecutorMeasurements['backlog']['retryproof'] => m.executors[scenario][peer];
  return {
    ingestRequestsPerNewDelivery: figure(requestsPerNewOf(m.loads.b[peer])),
    ingestRequestsPerDuplicate: figure(requestsPerRetryOf(m.loads.e[peer])),
    writeUnitsPerDeliveryLife: figure((peer === 'retryproof' ? m.writeUnits : m.powertoolsWriteUnits)?.newDeliveryLife),
    ingestCpuMsPerDelivery: figure(handlerCpuMsOf(m.loads.a[peer])),
    ingestCpuMsPerDuplicate: figure(handlerCpuMsOf(m.loads.e[peer])),
    c16P50Ms: figure(percentile(m.loads.b[peer].latenciesMs, 50)),
    executorRequestsPerMessage: {
      rest: figure(executor('rest').requestsPerExecuted),
      backlog: figure(executor('backlog').requestsPerExecuted),
      storm: figure(executor('storm').requestsPerExecuted),
    },
    executorCpuMsPerMessage: figure(executor('backlog').cpuMsPerExecuted),
    acceptToEffectP50Ms: { rest: figure(executor('rest').p50), storm: figure(executor('storm').p50) },
  };
}

function ratiosOf(rp: PipelineFigures, pt: PipelineFigures): PipelineFigures {
  const over = (pick: (p: PipelineFigures) => JsonFigure): JsonFigure => {
    const a = pick(rp);
    const b = pick(pt);
    return a === null || b === null || b === 0 ? null : figure(a / b);
  };
  return {
    ingestRequestsPerNewDelivery: over((p) => p.ingestRequestsPerNewDelivery),
    ingestRequestsPerDuplicate: over((p) => p.ingestRequestsPerDuplicate),
    writeUnitsPerDeliveryLife: over((p) => p.writeUnitsPerDeliveryLife),
    ingestCpuMsPerDelivery: over((p) => p.ingestCpuMsPerDelivery),
    ingestCpuMsPerDuplicate: over((p) => p.ingestCpuMsPerDuplicate),
    c16P50Ms: over((p) => p.c16P50Ms),
    executorRequestsPerMessage: {
      rest: over((p) => p.executorRequestsPerMessage.rest),
      backlog: over((p) => p.executorRequestsPerMessage.backlog),
      storm: over((p) => p.executorRequestsPerMessage.storm),
    },
    executorCpuMsPerMessage: over((p) => p.executorCpuMsPerMessage),
    acceptToEffectP50Ms: { rest: over((p) => p.acceptToEffectP50Ms.rest), storm: over((p) => p.acceptToEffectP50Ms.storm) },
  };
}

/** The figures of a run as `--json` prints them. */
export function benchJsonOf(m: JsonMeasurements): BenchJson {
  const retryproof = pipelineFigures(m, 'retryproof');
  const powertools = pipelineFigures(m, 'powertools');
  return { retryproof, powertools, ratios: ratiosOf(retryproof, powertools) };
}

/** The object as text: six significant digits per number, two-space indents, a final newline. */
export function benchJsonText(json: BenchJson): string {
  return `${JSON.stringify(json, (_key, value: unknown) => (typeof value === 'number' ? Number(value.toPrecision(6)) : value), 2)}\n`;
}
