/**
 * One Logger and one Metrics namespace for the project. Powertools reads its own
 * POWERTOOLS_* variables (service name, log level, metrics namespace).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

import { METRICS_NAMESPACE } from './metric-catalogue.ts';

export function createLogger(serviceName: string): Logger {
  return new Logger({ serviceName });
}

export function createMetrics(serviceName: string): Metrics {
  return new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
}
