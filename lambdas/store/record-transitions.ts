/**
 * Every state transition of an event record, each one conditional write, and the writes that
 * keep a state but guard a side effect: the stores only send these, and no other code moves a
 * record. Each transition's condition, maker and reason: docs/state-machine.md. By concern:
 * claim-transitions.ts (ingest), lease-transitions.ts (a run under its lease),
 * failure-transitions.ts (FAILED and redrive), park-transitions.ts (PARKED and the retry
 * partition); what they share is in record-conditions.ts.
 */
export { TAKEOVER_MARGIN_MS, clockMargins, DEAD_LETTER_STAMP_MARGIN_MS, keepUntilSeconds, COUNT_FROZEN, failedPartition, failedIndexKeys, parkedPartition, strandedPartition, strandedIndexKeys, parkedIndexKeys } from './record-conditions.ts';
export type { Transition, ClockMargins } from './record-conditions.ts';
export * from './claim-transitions.ts';
export * from './lease-transitions.ts';
export * from './failure-transitions.ts';
export * from './park-transitions.ts';
