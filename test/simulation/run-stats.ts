/** The counters of a run: what its faults and its protocol did, summed (or maxed) over runs. */

export interface RunStats {
  steps: number;
  deliveries: number;
  executions: number;
  crashes: number;
  /** Runs whose ordered pay route was paused from the start to the settle (RunShape.longPause). */
  longPauses: number;
  /** Action errors whose text held a character SQS refuses. */
  refusedCharErrors: number;
  /** Ingests killed after their send and before their place in an ordered line. */
  killedBeforePlace: number;
  /** Keys marked as having tripped the circuit breaker (each checked against its first 2xx). */
  breakerTrips: number;
  timeouts: number;
  redrives: number;
  reconcilerRuns: number;
  /** Reconciler runs that went on with a window an earlier run left unfinished (the cursor). */
  reconcilerResumes: number;
  /** Reconciler runs that found the cursor held by another run and did nothing. */
  reconcilerSkips: number;
  pauses: number;
  resumes: number;
  /** Runs with a rate-limited route (1), and those whose route had a queue of its own (1). */
  rateLimitedRuns: number;
  ownQueueRuns: number;
  /** The rate gate's admissions, and the runs it deferred (a delayed wake-up each). */
  rateAdmissions: number;
  rateDeferrals: number;
  /** Admitted runs ready too late for their start slot, which gave it up (deferLeased). */
  rateSlotsMissed: number;
  /** Runs whose every route sends every body to the bucket (claimCheckAboveBytes 0) (1). */
  claimCheckAllRuns: number;
  /** Bodies stored in a bucket (the S3 claim check), reads of them by workers, renewals, and S3's failures met. */
  bodyObjectsStored: number;
  bodyReads: number;
  bodyRenewals: number;
  bodyFaults: number;
  /**
   * Workers' reads of a body object last written longer ago than the routes' longest TTL, and the
   * oldest object read, in days (a maximum over runs): how far past the TTL the runs reach the
   * bucket's lifecycle, which must cover every message that points to an object.
   */
  bodyReadsPastTtl: number;
  oldestBodyReadDays: number;
  /** Runs whose routes have the shortest TTL their cover allows (1). */
  shortTtlRuns: number;
  /** Runs whose table has a deployment's byTime partitions an hour (EVENTS_TABLE.timeShards) (1). */
  deployedShardRuns: number;
  /** Runs whose pay route is ordered per entity (1); lines with two records that ran, and pairs of them checked for order. */
  orderedRuns: number;
  linesChecked: number;
  orderedPairs: number;
  /** Records parked in their line to wait for their turn (the executor's waiting-turn outcome). */
  waitingTurns: number;
  /** A person's bulk redrives (`retryproof redrive`), and the records they took back. */
  bulkRedrives: number;
  bulkRedriven: number;
  outages: number;
  clockJumps: number;
  /** Stalls of every parked invocation past a lease, within the Lambda timeout. */
  stalls: number;
  /** DynamoDB writes that committed and then answered an error the SDK retried. */
  ambiguousWrites: number;
  /** DynamoDB attempts throttled. */
  throttles: number;
  /** DynamoDB attempts answered seconds after the table acted (or given up on by an abortSignal). */
  slowAnswers: number;
  /** Second copies of an SQS message stored (at-least-once delivery). */
  sqsDuplicates: number;
  /** SQS messages handed to a worker while another held them. */
  concurrentDeliveries: number;
  /** SQS receives nobody saw, that still counted. */
  unseenReceives: number;
  /** Executor batches answered with some, not all, records failed. */
  partialBatches: number;
  /** The largest offset of any actor's clock from true time (a maximum over runs, not a sum). */
  maxClockSkewMs: number;
  /** The run's simulated span in days (a maximum over runs). */
  horizonDays: number;
  /** Captured deliveries re-posted, at any age. */
  replays: number;
  /** Items TTL deleted (late, as DynamoDB does). */
  ttlDeletions: number;
  /** Deliveries whose key header a proxy padded with whitespace. */
  paddedKeyHeaders: number;
  /** Deliveries of bodies at a size limit (the route's, or SQS's once escaped). */
  bodiesAtLimits: number;
  /** Deliveries answered 413 (too large for the route, or for SQS with its dead-letter reserve). */
  refusedTooLarge: number;
  /** Retries re-signed by their sender with a fresh timestamp (Standard Webhooks, Stripe). */
  resignedRetries: number;
  /** Clock moves to within twice the skew bound of a held lease's end, with a second worker polling. */
  edges: number;
  /** Lease writes answered late on purpose, just before a takeover boundary (the slow-lease operation). */
  slowLeases: number;
  /** Workers killed between a ledger post and the effect it was posted for (the crash-after-post operation). */
  cutsAfterPost: number;
  /** Redrives on the last day of a dead-letter copy's retention (the late-redrive operation, and a long run's last-day redrives). */
  lateRedrives: number;
  /** Action runs whose ledger post was apart from the effect (before it, or failed after it). */
  ledgerApartFromEffect: number;
  /** Runs with receivers in several Regions. */
  multiRegionRuns: number;
  /** Deliveries that landed in another Region than the key's first delivery. */
  crossRegionCopies: number;
  /** Writes refused with ReplicatedWriteConflictException (another Region's write met them). */
  replicatedConflicts: number;
  /** Regions cut off from the others for a while. */
  isolations: number;
  /** Writes copied to another Region's table (the eventually consistent control only). */
  replicatedWrites: number;
  /** Keys whose action took effect more often than runs that lost their record can excuse. */
  doubleEffects: number;
  /** Record generations that two runs each took to COMPLETED. */
  doubleCompletions: number;
  /** Claims that created a record while another Region's table held a live one of the key (the control only). */
  doubleClaims: number;
  /** Scheduled runs that found the window finished a moment ago (by another Region's run) and did nothing. */
  reconcilerNotDue: number;
  /** Expired items the reconciler's sweep deleted (several Regions: no TTL). */
  sweptItems: number;
}

/** Stats combined over runs by their maximum; every other one is summed. */
export const MAX_STATS: ReadonlySet<keyof RunStats> = new Set(['maxClockSkewMs', 'horizonDays', 'oldestBodyReadDays']);

/** All counters at zero. */
export function emptyStats(): RunStats {
  return {
    steps: 0,
    deliveries: 0,
    executions: 0,
    crashes: 0,
    longPauses: 0,
    refusedCharErrors: 0,
    killedBeforePlace: 0,
    breakerTrips: 0,
    timeouts: 0,
    redrives: 0,
    reconcilerRuns: 0,
    reconcilerResumes: 0,
    reconcilerSkips: 0,
    pauses: 0,
    resumes: 0,
    rateLimitedRuns: 0,
    ownQueueRuns: 0,
    rateAdmissions: 0,
    rateDeferrals: 0,
    rateSlotsMissed: 0,
    claimCheckAllRuns: 0,
    bodyObjectsStored: 0,
    bodyReads: 0,
    bodyRenewals: 0,
    bodyFaults: 0,
    bodyReadsPastTtl: 0,
    oldestBodyReadDays: 0,
    shortTtlRuns: 0,
    deployedShardRuns: 0,
    orderedRuns: 0,
    linesChecked: 0,
    orderedPairs: 0,
    waitingTurns: 0,
    bulkRedrives: 0,
    bulkRedriven: 0,
    outages: 0,
    clockJumps: 0,
    stalls: 0,
    ambiguousWrites: 0,
    throttles: 0,
    slowAnswers: 0,
    sqsDuplicates: 0,
    concurrentDeliveries: 0,
    unseenReceives: 0,
    partialBatches: 0,
    maxClockSkewMs: 0,
    horizonDays: 0,
    replays: 0,
    ttlDeletions: 0,
    paddedKeyHeaders: 0,
    bodiesAtLimits: 0,
    refusedTooLarge: 0,
    resignedRetries: 0,
    edges: 0,
    slowLeases: 0,
    cutsAfterPost: 0,
    lateRedrives: 0,
    ledgerApartFromEffect: 0,
    multiRegionRuns: 0,
    crossRegionCopies: 0,
    replicatedConflicts: 0,
    isolations: 0,
    replicatedWrites: 0,
    doubleEffects: 0,
    doubleCompletions: 0,
    doubleClaims: 0,
    reconcilerNotDue: 0,
    sweptItems: 0,
  };
}

export interface RunResult {
  readonly seed: number;
  readonly violations: readonly string[];
  readonly stats: RunStats;
}
