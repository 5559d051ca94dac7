import { describe, expect, it } from 'vitest';
import { MAX_LEAD_MS, MIN_LEAD_MS, StartLead } from '../../lambdas/executor/start-lead.ts';

describe('the lead a rate-limited run asks its slot with', () => {
  it('starts at 200 ms, follows twice what the writes before a start take, and stays within its bounds', () => {
    const lead = new StartLead();
    expect(lead.ms()).toBe(200);
    // Quick writes: the lead shrinks, never below the floor.
    for (let i = 0; i < 50; i++) lead.observe(2);
    expect(lead.ms()).toBe(MIN_LEAD_MS);
    // Writes of 150 ms (a loaded table, SDK retries): about twice that.
    for (let i = 0; i < 50; i++) lead.observe(150);
    expect(lead.ms()).toBe(300);
    // A stall of seconds: capped.
    for (let i = 0; i < 50; i++) lead.observe(5_000);
    expect(lead.ms()).toBe(MAX_LEAD_MS);
  });

  it('ignores a reading that is not a duration (a clock that stepped back)', () => {
    const lead = new StartLead();
    lead.observe(-40);
    lead.observe(Number.NaN);
    expect(lead.ms()).toBe(200);
  });
});
