/**
 * Every metric name and service dimension, and the local namespace, in one place (a
 * deployed receiver's namespace is its name prefix: lib/stateless/retryproof-metrics.ts). The functions emit
 * them (Powertools Metrics, EMF) and the CDK dashboard and alarms read them; one list,
 * so the two cannot drift. Powertools adds the `service` dimension to every metric.
 */
/** The namespace when POWERTOOLS_METRICS_NAMESPACE is unset (the local stack, the tests), and the app's own receiver's. */
export const METRICS_NAMESPACE = 'Retryproof';

export const SERVICE = {
  ingest: 'retryproof-ingest',
  executor: 'retryproof-executor',
  reconciler: 'retryproof-reconciler',
} as const;

/** Ingest, dimensions {service, route}; Answers adds `status`, RetryCause adds `previousStatus`. */
export const INGEST_METRIC = {
  deliveries: 'Deliveries',
  answers: 'Answers',
  duplicates: 'DuplicatesIntercepted',
  retryCause: 'RetryCause',
  duplicateAgeShareOfTtl: 'DuplicateAgeShareOfTtl',
  resent: 'MessagesResent',
  keyReused: 'KeyReused',
  signatureRejected: 'SignatureRejected',
  routePaused: 'RoutePaused',
  breakerTripped: 'BreakerTripped',
} as const;

/** Executor, dimensions {service, route}; Executions adds `outcome`. */
export const EXECUTOR_METRIC = {
  executions: 'Executions',
  duplicateMessages: 'DuplicateMessages',
  fencedOut: 'FencedOutCompletions',
  dlqArrivals: 'DlqArrivals',
  expired: 'ExpiredBeforeExecution',
  handedBack: 'HandedBack',
  parked: 'Parked',
  failed: 'Failed',
  /** Action run time as a share of the lease, percent: how close work comes to being taken over. */
  actionShareOfLease: 'ActionShareOfLease',
} as const;

/** Reconciler, dimensions {service}. */
export const RECONCILER_METRIC = {
  /** 1 per completed run, findings or not: the heartbeat whose absence means layer 3 is not running. */
  runs: 'ReconcilerRuns',
  scanned: 'ReconcilerScanned',
  reenqueued: 'ReconcilerReenqueued',
  reversed: 'ReconcilerReversed',
  missing: 'ReconcilerMissingEffects',
  orphans: 'ReconcilerOrphans',
  needsAttention: 'ReconcilerNeedsAttention',
  stoppedEarly: 'ReconcilerStoppedEarly',
  /** Expired items a run's sweep deleted (several Regions only: an MRSC table has no TTL). */
  swept: 'ReconcilerSwept',
} as const;
