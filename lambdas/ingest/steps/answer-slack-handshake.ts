import type { Step } from '../ingest-context.ts';

/**
 * Slack's signed url_verification carries no event_id: it only asks for its challenge back,
 * and nothing is stored or queued (architecture.md#answers-to-senders). Slack routes only.
 */
export const answerSlackHandshake: Step = (ctx) => {
  const challenge = slackChallengeOf(ctx.json());
  return challenge === undefined ? undefined : { kind: 'handshake', route: ctx.route.config.name, challenge };
};

/** The challenge of a Slack `url_verification` body, or undefined for any other body. */
function slackChallengeOf(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const { type, challenge } = body as { type?: unknown; challenge?: unknown };
  return type === 'url_verification' && typeof challenge === 'string' && challenge.length > 0 ? challenge : undefined;
}
