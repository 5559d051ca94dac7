/** What the simulation knows of each key of a run: its sender, its runs, its effects, its record as observed. */
import type { ObservedPlace } from './sim-ordering.ts';

/**
 * One run of a key's action: the true instants of its first and last call, if it made any, and
 * their places in the order every action call of the run was made (two calls may share an instant).
 */
export interface ActionRun {
  readonly attempt: number;
  /** On an ordered route: the place at which the record's turn came for this run. */
  readonly place?: ObservedPlace;
  /** The record's generation and redrives when it ran: runs of one budget share it. */
  readonly budget: string;
  readonly actor: number;
  firstCallMs?: number;
  lastCallMs?: number;
  firstCallSeq?: number;
  lastCallSeq?: number;
}

export interface KeyState {
  readonly route: string;
  /** The business event: the order the body names. The protocol's key should follow from it alone. */
  readonly order: string;
  /** Every downstream charge its action runs made or met. */
  readonly chargeIds: Set<string>;
  /** Its downstream keeps idempotency keys (rule 4 of the contract); one key in five meets one that keeps none. */
  readonly idempotentDownstream: boolean;
  /** Every key the protocol ran its action under (one, unless a key is derived differently per copy). */
  readonly protocolKeys: Set<string>;
  /** Every run of its action, in order. */
  readonly runs: ActionRun[];
  readonly key: string;
  readonly body: Buffer;
  /** Every action run always fails retryably: the budget runs out. */
  readonly hopeless: boolean;
  /** Hopeless until a person fixes its downstream (before a bulk redrive, at the settle): then it runs. */
  readonly fixable: boolean;
  /**
   * Its first `stutters` runs fail retryably (a downstream slow to warm up), then it runs: on an
   * ordered route, a head that retries while later work of its entity waits behind it.
   */
  readonly stutters: number;
  /** Action runs since the last redrive (or since acceptance). */
  runsInBudget: number;
  effects: number;
  /** Runs whose worker lost the record after its effect (killed, timed out, fenced out): a double effect is excused, and must be reversed. */
  excused: number;
  failed: boolean;
  sends: number;
  /** Deferrals for the route's rate limit this key won: each sends one delayed wake-up. */
  deferrals: number;
  /** Work messages ingest sent for this key, by resend window (floor(t / window)). */
  readonly ingestSends: Map<number, number>;
  /** Windows (floor(t / resend window)) in which a duplicate of this key arrived. */
  readonly duplicateWindows: Set<number>;
  delivered: number;
  /** The event number (see `arrivals`) of the first 2xx answer one of its deliveries got. */
  answeredSeq?: number;
  /**
   * The event number as the send began of the first ingest of it that died after its send began:
   * an answer it could have given, for the circuit breaker's checks only (killActor).
   */
  diedAfterSendSeq?: number;
  /** When its sender first sent it, true time: the sender retries within its retry window only. */
  firstSentAt?: number;
  /** The event number (see `arrivals`) of its first delivery's arrival. */
  firstArrivalSeq?: number;
  /** The event numbers of all its deliveries' arrivals. */
  arrivalSeqs?: number[];
  /** Hits of copies whose excuse (excuseRacingCopy) failed or never came: the design lets a count include them. */
  unexcusedHits?: number;
  /** Its creating delivery was answered 202 with no place taken in its line (placeFailed): it is placed later, by a worker. */
  placeFailed?: boolean;
  /** The first delivery's headers as signed then: what a replayer captured. */
  captured?: Record<string, string>;
  /** Its record went FAILED at some point: a person was told (the DLQ, the report). */
  everFailed: boolean;
  /** The deadLetterId of the last fail or failExhausted an executor wrote (or tried to) on its record. */
  lastDeadLetterId?: string;
  /** How its action posts the ledger entry beside the effect (contract for user code). */
  readonly ledgerMode: 'after' | 'after-post-fails' | 'before';
  /** A delivery of the key got a 2xx answer: its sender stops retrying. */
  answered: boolean;
  /** True time of the last 2xx answer a delivery of it got: a record generation claimed after it holds no answer of it. */
  lastAnsweredAt?: number;
  /** The receivedAt of the record generation a worker last leased. */
  generation?: number;
  /**
   * The record's redrive count (its `redrives`) as far as the simulation has accounted for it.
   * A redrive can commit and still answer false: its answer lost, the SDK's retry refused, and
   * another write between (a lease) took the nonce that would have recognised it. The count
   * on the record says it happened all the same.
   */
  redrivesSeen: number;
  /**
   * A person's copy of it went straight back to the DLQ unseen (see neverHanded): its record
   * may then expire with its work in the DLQ, and no code of ours could have known (seed 97).
   */
  bouncedUnseen?: boolean;
  /** The token of the last lease a worker took on the key's record. */
  leaseToken?: string;
  /** That lease's run count (the record's `runs` after it): leases commit in this order. */
  leaseRuns?: number;
  /** That lease's end, by its taker's clock, and the actor that took it. */
  lease?: { readonly untilMs: number; readonly holder: number };
  /** Deliveries of the key in flight now. */
  inFlight: number;
  /** Two deliveries of the key were ever in flight at once: one may read the other's 2xx claim. */
  concurrent: boolean;
  /** The Region its first delivery lands in; its copies alternate between the Regions from there. */
  readonly home: number;
  /** Completions that landed (complete answered true), by the generation (receivedAt) they completed. */
  readonly completions: Map<number, number>;
}
