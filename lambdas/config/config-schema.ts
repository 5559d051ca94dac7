/**
 * The schema of RetryproofConfig: every check of one field, every default that is a
 * constant, and no unknown key anywhere (a typo would otherwise leave a default in force
 * without a word). Checks that read two fields at once run after it, in resolve-config.ts.
 */
import { entitySourceFor } from '../domain/entity-order.ts';
import * as v from 'valibot';
import { perRetryTemplateHeaders } from '../domain/idempotency-key.ts';
import { parseKeyTemplate } from '../domain/key-template.ts';
import { CLAIM_CHECK_ABOVE_BYTES } from '../domain/body-object.ts';
import { must, objectMessage, perRetryMessage, shown } from './config-issues.ts';
import {
  COMPLETION_MARGIN_SECONDS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_TTL_SECONDS,
  HARD_MAX_BODY_BYTES,
  LAMBDA_MAX_TIMEOUT_SECONDS,
  LEASE_FACTOR,
  MAX_CLOCK_SKEW_SECONDS,
  MAX_RATE_PER_SECOND,
  MIN_CLOCK_SKEW_SECONDS,
  SIGNATURE_SCHEMES,
  SQS_MAX_VISIBILITY_SECONDS,
} from './route-config.ts';

const ROUTE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
/** Route actions and the keys of `actions`. */
const ACTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/** Every physical name a receiver makes starts with it: what queues, alarms, dashboards and APIs all accept. */
export const NAME_PREFIX = /^[A-Za-z][A-Za-z0-9-]{0,39}$/;
export const NAME_PREFIX_RULE = '1 to 40 letters, digits or "-", starting with a letter';
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
/** A DynamoDB table's name (3 to 255 of `A-Za-z0-9_.-`), or its ARN (DynamoDB Developer Guide, "Naming rules"). */
const EXISTING_TABLE = /^(?:[A-Za-z0-9_.-]{3,255}|arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/[A-Za-z0-9_.-]{3,255})$/;
const EXISTING_TABLE_RULE = 'a DynamoDB table name (3 to 255 letters, digits, "_", "." or "-") or a table ARN';
/** Names that are object internals to JavaScript and to the DynamoDB marshaller. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The longest action whose lease (3x) and completion margin fit in Lambda's timeout: 296 s. */
const MAX_ACTION_TIME_SECONDS = Math.floor((LAMBDA_MAX_TIMEOUT_SECONDS - COMPLETION_MARGIN_SECONDS) / LEASE_FACTOR);

/** An integer from min to max (or min and up), with one message for a wrong type and a wrong value. */
function integer(min: number, max?: number, why = '') {
  const message = must(`${max === undefined ? `an integer >= ${min}` : `an integer from ${min} to ${max}`}${why}`);
  return v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max ?? Infinity, message));
}

function text(pattern: RegExp, rule: string) {
  const message = must(rule);
  return v.pipe(v.string(message), v.regex(pattern, message));
}

function oneOf<const T extends readonly [string, ...string[]]>(options: T) {
  return v.picklist(options, must(`one of ${options.join(', ')}`));
}

/** A strict object: a key that is not one of its entries is refused. */
function strict<const T extends v.ObjectEntries>(entries: T, what = 'an object') {
  return v.strictObject(entries, objectMessage(Object.keys(entries), what));
}

const headerName = text(HEADER_NAME, 'a lowercase header name');
const boolean = v.boolean(must('true or false'));

const hmacSignature = strict({
  scheme: v.literal('hmac-sha256'),
  header: headerName,
  prefix: v.optional(v.string(must('a string')), ''),
  encoding: v.optional(oneOf(['hex', 'base64']), 'hex'),
});

const timestampedSignature = strict({
  scheme: v.picklist(['standard-webhooks', 'stripe', 'slack']),
  toleranceSeconds: v.optional(integer(1, 3600), 300),
});

const plainSignature = strict({ scheme: v.picklist(['github', 'shopify']) });

const signature = v.variant('scheme', [hmacSignature, timestampedSignature, plainSignature], (issue) =>
  // The issue of an unknown scheme carries the path to `scheme`; that of a non-object, none.
  issue.path === undefined
    ? `must be an object with a scheme, got ${shown(issue.input)}`
    : `must be one of ${SIGNATURE_SCHEMES.join(', ')}, got ${shown(issue.input)}`,
);

/** An `orderBy` template: the key template language over the body's fields only (domain/entity-order.ts). */
const orderTemplate = v.pipe(
  v.string(must('an ordering template such as "{body:/data/object/customer}"')),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    try {
      entitySourceFor(dataset.value);
    } catch (err) {
      addIssue({ message: `${shown(dataset.value)} is not a valid ordering template: ${(err as Error).message}` });
    }
  }),
);

const keyTemplate = v.pipe(
  v.string(must('a key template')),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    try {
      parseKeyTemplate(dataset.value);
    } catch (err) {
      addIssue({ message: `${shown(dataset.value)} is not a valid template: ${(err as Error).message}` });
      return;
    }
    // Refused whatever else the template reads: one part that changes on every retry makes the whole key change.
    const resigned = perRetryTemplateHeaders(dataset.value);
    if (resigned.length > 0) addIssue({ message: perRetryMessage(dataset.value, resigned) });
  }),
);

const keptHeader = v.pipe(
  headerName,
  // Kept headers become a map's keys in the record; these names are object internals to
  // JavaScript and to the DynamoDB marshaller, which would drop or refuse them at run time.
  v.check((header) => !RESERVED_KEYS.has(header), (issue) => `${shown(issue.input)} cannot be kept (a reserved object key)`),
);

const actionTimeValue = integer(
  1,
  MAX_ACTION_TIME_SECONDS,
  ` (its lease, ${LEASE_FACTOR}x, and the ${COMPLETION_MARGIN_SECONDS} s completion margin must fit in Lambda's ${LAMBDA_MAX_TIMEOUT_SECONDS} s timeout)`,
);

const actionTimeTable = strict(
  {
    // A top-level field name, or an RFC 6901 pointer when it starts with "/".
    field: v.pipe(v.string(must('a body field name or a JSON pointer')), v.minLength(1, must('a body field name or a JSON pointer'))),
    seconds: v.pipe(
      v.custom<Record<string, number>>((input) => typeof input === 'object' && input !== null && !Array.isArray(input), must('an object of seconds by value')),
      v.record(v.string(), actionTimeValue),
      v.check((table) => Object.keys(table).length > 0, must('an object with at least one value')),
    ),
    otherwise: actionTimeValue,
  },
  'an object { field, seconds, otherwise }',
);

// A rate limit per second, minute or hour: exactly one. why: docs/architecture.md#rate-gate (at most 200 a second)
const rateLimit = v.pipe(
  strict(
    {
      perSecond: v.optional(integer(1, MAX_RATE_PER_SECOND)),
      perMinute: v.optional(integer(1, MAX_RATE_PER_SECOND * 60)),
      perHour: v.optional(integer(1, MAX_RATE_PER_SECOND * 3600)),
    },
    'an object { perSecond } or { perMinute } or { perHour }',
  ),
  v.check(
    (limit) => [limit.perSecond, limit.perMinute, limit.perHour].filter((n) => n !== undefined).length === 1,
    (issue) => `must give exactly one of perSecond, perMinute and perHour, got ${shown(issue.input)}`,
  ),
);

const REGION_NAME = /^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]{1,2}$/;
const regionName = text(REGION_NAME, 'an AWS Region name such as eu-west-1');

const regions = strict(
  {
    replicas: v.pipe(
      v.array(regionName, must('a list of Region names')),
      v.minLength(2, (issue) => `must list at least two Regions (one Region needs no regions setting), got ${shown(issue.input)}`),
    ),
    witness: v.optional(regionName),
    consistency: v.optional(oneOf(['strong', 'eventual']), 'strong'),
  },
  'an object { replicas, witness?, consistency? }',
);

const route = strict(
  {
    name: text(ROUTE_NAME, '1 to 63 lowercase letters, digits, "-" or "_", starting with a letter or digit'),
    signature,
    secretName: text(SECRET_NAME, 'a Secrets Manager name (1 to 512 letters, digits or /_+=.@-)'),
    importSecret: v.optional(boolean, false),
    key: v.optional(keyTemplate),
    ttlSeconds: v.optional(integer(1), DEFAULT_TTL_SECONDS),
    senderRetryWindowSeconds: v.optional(integer(1)),
    actionTimeSeconds: v.optional(actionTimeValue),
    actionTime: v.optional(actionTimeTable),
    maxAttempts: v.optional(integer(1, 100), DEFAULT_MAX_ATTEMPTS),
    action: text(ACTION_NAME, 'an action name: a letter, then up to 63 letters, digits, "-" or "_"'),
    keepHeaders: v.optional(v.array(keptHeader, must('a list of header names')), []),
    // One lost acknowledgement is routine for an at-least-once sender; it must not pause a route.
    breakerThreshold: v.optional(integer(2), 3),
    breakerReaction: v.optional(oneOf(['pause', 'alert']), 'pause'),
    duplicateAnswer: v.optional(oneOf(['replay', 'strict-409']), 'replay'),
    maxBodyBytes: v.optional(integer(1, HARD_MAX_BODY_BYTES), HARD_MAX_BODY_BYTES),
    claimCheckAboveBytes: v.optional(integer(0, CLAIM_CHECK_ABOVE_BYTES), CLAIM_CHECK_ABOVE_BYTES),
    rateLimit: v.optional(rateLimit),
    // The SQS event source's own lower bound is 2.
    concurrency: v.optional(integer(2, 1000)),
    ownQueue: v.optional(boolean),
    orderBy: v.optional(orderTemplate),
  },
  'a route object',
);

const nonEmpty = v.pipe(v.string(must('a non-empty path')), v.minLength(1, must('a non-empty path')));

const actionSource = strict({ entry: nonEmpty, ledger: v.optional(nonEmpty) }, 'an object { entry, ledger? }');

const actionsByName = v.record(text(ACTION_NAME, 'a letter, then up to 63 letters, digits, "-" or "_"'), actionSource);
const actionsMessage = must('an object of actions by name');
// valibot's record takes an array as an object; a list of names is a likely slip, refused as one.
const actions = v.pipe(
  v.custom<v.InferInput<typeof actionsByName>>((input) => typeof input === 'object' && input !== null && !Array.isArray(input), actionsMessage),
  actionsByName,
);

const queue = strict({
  maxReceiveCount: v.optional(integer(1, 1000)),
  visibilityTimeoutSeconds: v.optional(integer(1, SQS_MAX_VISIBILITY_SECONDS)),
  batchSize: v.optional(integer(1, 10), 10),
  maxBatchingWindowSeconds: v.optional(integer(0, 300), 1),
  // The SQS event source's own lower bound is 2.
  maxConcurrency: v.optional(integer(2, 1000), 5),
});

const reconciliation = strict({
  windowHours: v.optional(integer(1, 24 * 14), 24),
  everyMinutes: v.optional(integer(1, 24 * 60), 60),
  settleSeconds: v.optional(integer(1, 3600), 300),
  stuckAfterSeconds: v.optional(integer(1), 900),
  maxReenqueuePerRun: v.optional(integer(1), 500),
});

const api = strict({
  throttlingRateLimit: v.optional(integer(1), 200),
  throttlingBurstLimit: v.optional(integer(1), 400),
});

const shareMessage = must('a number above 0 and at most 1');
const alarms = strict({
  duplicateStormShare: v.optional(v.pipe(v.number(shareMessage), v.gtValue(0, shareMessage), v.maxValue(1, shareMessage)), 0.5),
  duplicateStormMinDeliveries: v.optional(integer(1), 20),
});

/** RetryproofConfig as data: parse it to get every field checked and every constant default applied. */
export const RetryproofConfigSchema = strict(
  {
    routes: v.pipe(
      v.array(route, must('a list of routes')),
      v.minLength(1, (issue) => `must list at least one route, got ${shown(issue.input)}`),
    ),
    actions: v.optional(actions),
    namePrefix: v.optional(text(NAME_PREFIX, NAME_PREFIX_RULE)),
    existingEventsTable: v.optional(text(EXISTING_TABLE, EXISTING_TABLE_RULE)),
    queue: v.optional(queue, {}),
    reconciliation: v.optional(reconciliation, {}),
    api: v.optional(api, {}),
    demo: v.optional(boolean, false),
    alarmEmail: v.optional(text(EMAIL, 'an e-mail address')),
    alarms: v.optional(alarms, {}),
    logRetentionDays: v.optional(integer(1), 30),
    tracing: v.optional(boolean, false),
    regions: v.optional(regions),
    maxClockSkewSeconds: v.optional(integer(MIN_CLOCK_SKEW_SECONDS, MAX_CLOCK_SKEW_SECONDS)),
  },
  'an object',
);

/** The configuration after the schema: checked field by field, constant defaults applied. */
export type ParsedConfig = v.InferOutput<typeof RetryproofConfigSchema>;
