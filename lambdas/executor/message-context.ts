/**
 * One message's state as its route's gates fill it in, and the shape of a gate, after middy's
 * `runMiddlewares`: a gate returns a report to stop the message, or undefined to let it pass.
 */
import type { Buffer } from 'node:buffer';
import type { Action, ActionResult } from '../actions/action.ts';
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { recordLease } from '../config/route-lease.ts';
import type { LeaseTimes } from '../config/route-lease.ts';
import type { EventRecord, Payload, WorkMessage } from '../domain/event-record.ts';
import type { LineRef } from '../ports/entity-order.ts';
import type { EntityOrder } from '../ports/entity-order.ts';
import type { ExecutionLogEntry, RecordRef } from '../ports/execution-store.ts';
import type { ExecutionReport } from './execution-report.ts';
import type { Executor, QueuedMessage } from './executor-deps.ts';
import type { StartLead } from './start-lead.ts';
import { parseWorkMessage } from './work-message.ts';

/** What differs per invocation of the Lambda. */
export interface Invocation {
  /** Time left in this invocation; an action never runs past it. */
  readonly remainingMs: () => number;
  readonly requestId?: string;
}

/** The body a message's work runs on, and how its sends name the body's object. */
export interface MessageBody {
  /** As the message carries it: the record and every copy keep this (a pointer, for a large body). */
  readonly kept: Payload;
  /** What the action runs on: the bytes read back from the bucket, for a large body. */
  readonly payload: Payload;
  readonly bytes: Buffer;
  /** SHA-256 of `bytes`: only the body the record was accepted with runs or is kept. */
  readonly fingerprint: string;
  /** For the executor's own sends: when the body's object was last written, when known. */
  readonly sendHint: { readonly bodyWrittenAtMs?: number };
}

/** A rate-limited run's start slot: the action starts there or not at all. */
export interface Slot {
  readonly startAtMs: number;
  readonly askedAtMs: number;
  readonly lead: StartLead;
}

/** The lease this message's worker holds on its record, and what its later writes carry. */
export interface HeldLease {
  readonly record: EventRecord;
  /** The run number across redrives: what the action and the log see. The budget is `attempts`. */
  readonly attempt: number;
  readonly times: LeaseTimes;
  /** The instant before the lease write was sent: the lease's own start. */
  readonly startedAt: number;
  readonly afterLease: number;
  readonly deadline: number;
  readonly log: Omit<ExecutionLogEntry, 'endedAt' | 'outcome'>;
  readonly fence: { readonly route: string; readonly key: string; readonly token: string };
}

/** One message. The gates run in the order gatesFor gives, and each reads only what an earlier one set. */
export interface MessageContext {
  readonly executor: Executor;
  readonly message: QueuedMessage;
  readonly invocation: Invocation;
  /** The message's work; undefined when it is none (gates/unreadable.ts stops it). */
  readonly parsed: WorkMessage | undefined;
  /** Set by gates/unreadable.ts, with the names every report and write carries. */
  work: WorkMessage;
  about: { readonly route: string; readonly key: string };
  ref: RecordRef;
  /** Set by gates/body-missing.ts. */
  body: MessageBody;
  /** Set by gates/unrunnable.ts. */
  route: ResolvedRoute;
  action: Action;
  /** Set by gates/entity-turn.ts when it is the record's turn in its entity's line. */
  line?: { readonly order: EntityOrder; readonly ref: LineRef; readonly place: number };
  /** Set by gates/rate-gate.ts when the gate gave a start slot. */
  slot?: Slot;
  /** This record's own lease times (leaseTimesOf). */
  times?: LeaseTimes;
  /** Set by phases/lease.ts. */
  lease: HeldLease;
  /** Set by phases/run.ts: the action's result, or what it (or a write before it) threw. */
  ran: { readonly result: ActionResult } | { readonly error: unknown };
}

export type Gate = (ctx: MessageContext) => Promise<ExecutionReport | undefined> | ExecutionReport | undefined;

/** A message's context before its first gate. */
export function contextOf(executor: Executor, message: QueuedMessage, invocation: Invocation): MessageContext {
  // The rest is set by the gates, in the order gatesFor guarantees.
  return { executor, message, invocation, parsed: parseWorkMessage(message.body) } as MessageContext;
}

/** Runs the gates in order until one reports; a gate that answers at once is not awaited. */
export async function runGates(gates: readonly Gate[], ctx: MessageContext): Promise<ExecutionReport> {
  for (const gate of gates) {
    const answer = gate(ctx);
    const report = answer instanceof Promise ? await answer : answer;
    if (report !== undefined) return report;
  }
  throw new Error(`no gate reported on message ${ctx.message.messageId}`);
}

/**
 * This record's own lease: on a route with a time per destination, the one its body picks. The
 * lease write refuses any other body, so no message chooses a lease its record would not get.
 */
export function leaseTimesOf(ctx: MessageContext): LeaseTimes {
  ctx.times ??= recordLease(ctx.route, ctx.body.payload.body, ctx.body.payload.bodyEncoding);
  return ctx.times;
}
