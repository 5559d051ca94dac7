import { describe, expect, it } from 'vitest';
import { mergeExecutorRounds } from '../../bench/executor-figures.ts';
import type { ExecutorRound } from '../../bench/executor-figures.ts';
import { executorFigureRows, executorSection } from '../../bench/executor-report.ts';
import type { Measurements } from '../../bench/measurements.ts';
import { settingsFor } from '../../bench/run.ts';
import { executorRound as round } from './executor-round.ts';

/** Only what the executor section reads. */
function measurements(rp: ExecutorRound, pt: ExecutorRound): Measurements {
  const pair = { retryproof: mergeExecutorRounds([rp, rp]), powertools: mergeExecutorRounds([pt, pt]) };
  return {
    settings: settingsFor(true),
    executors: { backlog: pair, rest: pair, storm: pair, resent: pair },
    workloadCExecutor: {
      retryproof: { received: 200, executed: 190, cpuMicros: 500_000, requests: 410, byOperation: { UpdateItemCommand: 400, GetItemCommand: 10 } },
      powertools: { received: 150, executed: 150, cpuMicros: 300_000, requests: 300, byOperation: { PutItemCommand: 150, UpdateItemCommand: 150 } },
      naive: { received: 0, executed: 0, cpuMicros: 0, requests: 0, byOperation: {} },
    },
  } as unknown as Measurements;
}

describe('the executor section of BENCHMARKS.md', () => {
  it('gives each figure per executed message with the ratio to the consumer and its spread over rounds', () => {
    // Prepare: retryproof needs 21 requests for 10 executed messages, the consumer 20.
    const m = measurements(round({ requests: 21 }), round());
    // Act
    const rows = executorFigureRows(m);
    // Assess
    expect(rows.find((r) => r[0] === 'DynamoDB requests per executed message (backlog)')).toEqual([
      'DynamoDB requests per executed message (backlog)',
      '2.10',
      '2.00',
      '1.05x',
      '1.05x-1.05x',
    ]);
  });

  it("says how workload c keeps the executor's work out of every receiver's figures, with the executor's own CPU and requests", () => {
    // Act
    const text = executorSection(measurements(round(), round())).join('\n');
    // Assess
    expect(text).toContain("no receiver's figures include another's executor");
    expect(text).toContain("| retryproof | retryproof's executor | 200 | 190 | 500.0 | 2.500 | 410 (UpdateItem 400, GetItem 10) |");
    expect(text).toContain('| Powertools | Powertools SQS consumer | 150 | 150 | 300.0 | 2.000 | 300 (PutItem 150, UpdateItem 150) |');
    // An executor that received nothing divides by one, not by zero.
    expect(text).toContain('| naive | Powertools SQS consumer | 0 | 0 | 0.0 | 0.000 | 0 (none) |');
  });
});
