import { describe, expect, it } from 'vitest';
import { executorGoalsOf, mergeExecutorRounds } from '../../bench/executor-figures.ts';
import type { ExecutorMeasurements, ExecutorRound } from '../../bench/executor-figures.ts';
import { missedParagraphs } from '../../bench/goal.ts';
import type { Goal } from '../../bench/goal.ts';
import { executorRound } from './executor-round.ts';

function goal(figure: string, over: Partial<Goal> = {}): Goal {
  return { figure, goal: '≤ 1', retryproof: '2', powertools: '1', ratio: '2.00x', spread: '-', met: false, missed: `${figure}: its figures.`, ...over };
}

function measurements(rp: ExecutorRound, pt: ExecutorRound): ExecutorMeasurements {
  const pair = { retryproof: mergeExecutorRounds([rp]), powertools: mergeExecutorRounds([pt]) };
  return { backlog: pair, rest: pair, storm: pair, resent: pair };
}

describe("BENCHMARKS.md's missed goals", () => {
  it('gives each missed goal one paragraph, and writes a reason several share only at the first of them', () => {
    // Prepare
    const goals = [goal('a', { why: 'Shared.' }), goal('met', { met: true }), goal('b', { why: 'Shared.' }), goal('c')];
    // Act
    const paragraphs = missedParagraphs(goals);
    // Assess
    expect(paragraphs).toEqual(['- **a.** a: its figures. Shared.', '- **b.** b: its figures. Why: as for a.', '- **c.** c: its figures.']);
  });

  it("explains the executor's request goal once when it is missed in every scenario", () => {
    // Prepare: one extra read a batch in every scenario.
    const rp = executorRound({ requests: 21, byOperation: { UpdateItemCommand: 20, GetItemCommand: 1 } });
    const pt = executorRound({ byOperation: { PutItemCommand: 10, UpdateItemCommand: 10 } });
    // Act
    const text = missedParagraphs(executorGoalsOf(measurements(rp, pt)).filter((g) => g.figure.includes('DynamoDB requests'))).join('\n');
    // Assess
    expect(text.match(/Both take a lease/g)).toHaveLength(1);
    expect(text.match(/Why: as for executor: DynamoDB requests per executed message \(backlog, batch 10\)\./g)).toHaveLength(3);
    expect(text.match(/GetItem 0\.10/g)).toHaveLength(4);
  });
});
