/**
 * Every error the edge can answer with. Each maps to exactly one HTTP status and an
 * RFC 9457 problem type; anything that is not one of these becomes a bare 500.
 */

/** Base of all answerable errors. `detail` is shown to the sender, so it never echoes secrets or bodies. */
export class RetryproofError extends Error {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  constructor(status: number, type: string, title: string, detail: string, options?: ErrorOptions) {
    super(detail, options);
    this.name = 'RetryproofError';
    this.status = status;
    this.type = type;
    this.title = title;
  }
}

const PROBLEM_BASE = 'https://retryproof.dev/problems/';

/** No idempotency key, or one that is not 1 to 255 printable characters. */
export class InvalidKeyError extends RetryproofError {
  constructor(detail: string) {
    super(400, `${PROBLEM_BASE}invalid-idempotency-key`, 'Missing or invalid idempotency key', detail);
    this.name = 'InvalidKeyError';
  }
}

/**
 * A route ordered per entity (`orderBy`) could not find the entity in the body: the delivery has
 * no place in any line, and nothing is written for it.
 */
export class MissingEntityError extends RetryproofError {
  constructor(detail: string) {
    super(400, `${PROBLEM_BASE}missing-order-entity`, 'Missing ordering entity', detail);
    this.name = 'MissingEntityError';
  }
}

/** The body is not the JSON the route needs. */
export class MalformedBodyError extends RetryproofError {
  constructor(detail: string, options?: ErrorOptions) {
    super(400, `${PROBLEM_BASE}malformed-body`, 'Malformed request body', detail, options);
    this.name = 'MalformedBodyError';
  }
}

/**
 * Bad or missing signature, or a timestamp outside the tolerance. The sender is told
 * nothing more: the reason is logged and counted on our side only.
 */
export class UnauthorizedError extends RetryproofError {
  readonly reason: string;
  constructor(reason: string) {
    super(401, `${PROBLEM_BASE}unauthorized`, 'Unauthorized', 'The request signature could not be verified.');
    this.name = 'UnauthorizedError';
    this.reason = reason;
  }
}

export class UnknownRouteError extends RetryproofError {
  constructor(route: string) {
    super(404, `${PROBLEM_BASE}unknown-route`, 'Unknown route', `No webhook route is named "${route}".`);
    this.name = 'UnknownRouteError';
  }
}

export class MethodNotAllowedError extends RetryproofError {
  constructor(method: string) {
    super(405, `${PROBLEM_BASE}method-not-allowed`, 'Method not allowed', `Webhooks are delivered with POST, not ${method}.`);
    this.name = 'MethodNotAllowedError';
  }
}

export class PayloadTooLargeError extends RetryproofError {
  constructor(size: number, limit: number) {
    super(413, `${PROBLEM_BASE}payload-too-large`, 'Payload too large', `The body has ${size} bytes; this route accepts at most ${limit}.`);
    this.name = 'PayloadTooLargeError';
  }
}

/**
 * The body fits the route's limit but not the queue: once escaped into its work message it
 * is over SQS's size limit, or it holds characters SQS refuses. Refused before anything is
 * written, so the sender is told at once rather than answered 503 on every retry.
 */
export class UnqueueableBodyError extends RetryproofError {
  constructor(detail: string) {
    super(413, `${PROBLEM_BASE}payload-too-large`, 'Payload too large', detail);
    this.name = 'UnqueueableBodyError';
  }
}

/** The key was already used for a delivery with another body; the first one stands. */
export class KeyReusedError extends RetryproofError {
  constructor(id: string) {
    super(
      422,
      `${PROBLEM_BASE}idempotency-key-reused`,
      'Idempotency key reused with a different payload',
      `The key of "${id}" was first used with another body. That first delivery stands; send new work under a new key.`,
    );
    this.name = 'KeyReusedError';
  }
}

/** A route that chose strict answers gets 409 for a duplicate instead of a replay. */
export class DuplicateDeliveryError extends RetryproofError {
  constructor(id: string) {
    super(409, `${PROBLEM_BASE}duplicate-delivery`, 'Duplicate delivery', `"${id}" was already accepted.`);
    this.name = 'DuplicateDeliveryError';
  }
}

/** A dependency of ours failed (DynamoDB, SQS, Secrets Manager). The sender should retry. */
export class DependencyError extends RetryproofError {
  constructor(dependency: string, options?: ErrorOptions) {
    super(503, `${PROBLEM_BASE}temporarily-unavailable`, 'Temporarily unavailable', `A dependency (${dependency}) failed; retry the delivery.`, options);
    this.name = 'DependencyError';
  }
}
