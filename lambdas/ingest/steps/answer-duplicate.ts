import type { DuplicateContext, Step } from '../ingest-context.ts';

/**
 * The first answer replayed, or 409 on a strict route; a 5xx of ours is never replayed: this copy
 * gets the first acceptance (architecture.md#answers-to-senders).
 */
export const answerDuplicate: Step<DuplicateContext> = ({ route: { config }, key, accepted, old, now, answeredFailure, repeats, resent, breaker, marked }) => ({
  kind: 'duplicate',
  route: config.name,
  key,
  answer: answeredFailure ? accepted : old.answer,
  answerAs: answeredFailure ? 'accept' : config.duplicateAnswer === 'strict-409' ? 'refuse' : 'replay',
  previousStatus: old.answer.status,
  hits: old.hits + 1,
  repeats,
  ageMs: now - old.receivedAt,
  ttlSeconds: config.ttlSeconds,
  resent,
  ...(breaker === undefined ? {} : { breaker }),
  ...(marked ? {} : { markFailed: true }),
});
