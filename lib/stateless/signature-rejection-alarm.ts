import { MathExpression } from 'aws-cdk-lib/aws-cloudwatch';
import { INGEST_METRIC } from '../../lambdas/observability/metric-catalogue.ts';
import { DEFAULT_PERIOD } from './retryproof-metrics.ts';
import type { ReceiverMetrics } from './retryproof-metrics.ts';

/** The share of a route's deliveries answered 401 in 5 minutes above which its alarm fires. */
export const SIGNATURE_REJECTED_SHARE = 0.5;
/** Deliveries in 5 minutes below which the alarm stays quiet: a stray forged request is not a page. */
export const SIGNATURE_REJECTED_MIN_DELIVERIES = 5;
/** Periods of 5 minutes in a row over the share before it fires: a wrong secret stays wrong, a probe passes. */
export const SIGNATURE_REJECTED_PERIODS = 2;

/** What one route's signature-rejection alarm reads and when it fires. */
export interface SignatureRejectionAlarm {
  readonly name: string;
  readonly description: string;
  readonly metric: MathExpression;
  readonly threshold: number;
  readonly evaluationPeriods: number;
}

/**
 * The alarm on a route's share of deliveries refused for their signature (401): `SignatureRejected`
 * over `Deliveries`, both of the ingest, per route (lambdas/ingest/ingest-metrics.ts counts both
 * on every answer). Most deliveries of a route failing verification means the receiver holds the
 * wrong secret: a rotation done at the sender and not here, or a `put-secret-value` never run
 * after deploy. Senders retry a 401 (Stripe for 3 days), so nothing is lost yet, but nothing runs
 * either. The runbook: docs, "Runbook: signature rejections".
 */
export function signatureRejectionAlarm(metrics: ReceiverMetrics, route: string, i: number, secretName: string): SignatureRejectionAlarm {
  const share = Math.round(SIGNATURE_REJECTED_SHARE * 100);
  return {
    name: `signature-rejections-${route}`,
    description:
      `Over ${share}% of route "${route}"'s deliveries were refused as 401 for ${SIGNATURE_REJECTED_PERIODS * 5} minutes (from ${SIGNATURE_REJECTED_MIN_DELIVERIES} deliveries in 5 minutes up), ` +
      'so the receiver most likely holds the wrong signing secret (a rotation made at the sender only, or a put-secret-value never run), and senders keep retrying. ' +
      `First compare the sender's current signing secret with the value of ${secretName} in Secrets Manager and put the right one, ` +
      '{"current": "<new>", "previous": "<old>"} while both may still sign (runbook: signature rejections).',
    metric: new MathExpression({
      expression: `IF(sigDeliveries${i} >= ${SIGNATURE_REJECTED_MIN_DELIVERIES}, rejected${i} / sigDeliveries${i}, 0)`,
      usingMetrics: {
        [`sigDeliveries${i}`]: metrics.ingest(INGEST_METRIC.deliveries, route),
        [`rejected${i}`]: metrics.ingest(INGEST_METRIC.signatureRejected, route),
      },
      label: `signature rejections share, ${route}`,
      period: DEFAULT_PERIOD,
    }),
    threshold: SIGNATURE_REJECTED_SHARE,
    evaluationPeriods: SIGNATURE_REJECTED_PERIODS,
  };
}
