import type { Step } from '../ingest-context.ts';

/** A new delivery, recorded and queued: 202 (architecture.md#answers-to-senders). */
export const answerAccepted: Step = ({ route, key, accepted, claim, marked, placeFailed }) => ({
  kind: 'accepted',
  route: route.config.name,
  key,
  answer: accepted,
  ...(claim.kind === 'created' && claim.retried === true ? { retriedClaim: true } : {}),
  ...(marked ? {} : { markFailed: true }),
  ...(placeFailed ? { placeFailed: true } : {}),
});
