import { RetentionDays } from 'aws-cdk-lib/aws-logs';

const RETENTIONS: readonly RetentionDays[] = Object.values(RetentionDays).filter(
  (value): value is RetentionDays => typeof value === 'number',
);

/**
 * Turns a retention in days into one CloudWatch Logs accepts. resolveConfig only checks
 * that the number is positive; CloudWatch takes a fixed list (1, 3, 5, 7, 14, 30, ...),
 * and a value off the list would otherwise fail at deploy, not at synth.
 * @throws Error naming the value when CloudWatch Logs has no such retention
 */
export function logRetention(days: number): RetentionDays {
  const retention = RETENTIONS.find((r) => r.valueOf() === days);
  if (retention === undefined) {
    const allowed = [...RETENTIONS].sort((a, b) => a - b).join(', ');
    throw new Error(`log retention of ${days} days is not one cloudwatch logs accepts (${allowed})`);
  }
  return retention;
}
