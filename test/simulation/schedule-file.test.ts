/**
 * A saved schedule (`npm run simulate -- --save-shrunk DIR`) replays with `--seed S --schedule
 * FILE`: the file is checked before DynamoDB Local starts, and a bad one is a usage error.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../local/stack-process.ts';
import { OPS } from './protocol-simulation.ts';
import { parseSchedule } from './run-simulation.ts';

describe('a saved simulation schedule', () => {
  it('reads back the operations it was saved with', () => {
    // Prepare
    const ops = [
      { op: 'deliver', a: 0.291, b: 0.504 },
      { op: 'slow-lease', a: 0, b: 0.999 },
    ];
    // Act
    const read = parseSchedule(JSON.stringify(ops));
    // Assess
    expect(read).toEqual(ops);
  });

  it.each([
    ['{nope', 'not JSON'],
    ['[]', 'a non-empty JSON array'],
    ['{"op":"deliver","a":0,"b":0}', 'a non-empty JSON array'],
    ['[{"op":"deliver","a":0,"b":0},{"op":"explode","a":0,"b":0}]', `operation 2: "op" must be one of ${OPS.join(', ')}`],
    ['[{"op":"poll","a":1,"b":0}]', 'operation 1 (poll): "a" and "b" must be numbers from 0 up to 1'],
    ['[{"op":"poll","a":0.5}]', 'operation 1 (poll): "a" and "b" must be numbers from 0 up to 1'],
  ])('refuses %s, naming what is wrong', (text, message) => {
    expect(() => parseSchedule(text)).toThrow(message);
  });

  describe('on the simulate command line', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'retryproof-schedule-'));
      await writeFile(join(dir, 'bad.json'), '[{"op":"explode","a":0,"b":0}]');
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it.each([
      [['--schedule', 'x.json'], '--schedule needs --seed'],
      [['--seed', '1', '--schedule', 'missing.json'], '--schedule missing.json: ENOENT'],
      [['--seed', '1', '--schedule', 'BAD'], 'operation 1: "op" must be one of'],
    ])('%j exits 2 naming the problem, before DynamoDB Local starts', async (args, message) => {
      // Act
      const out = await runScript('scripts/simulate.ts', args.map((a) => (a === 'BAD' ? join(dir, 'bad.json') : a)), process.env);
      // Assess
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(message);
      expect(out.stderr).not.toContain('starting DynamoDB Local');
    });
  });
});
