/**
 * Every check of a configuration, as its user meets it: the last value each check accepts,
 * the first it refuses, and the exact sentence the refusal reads.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig, RouteConfig } from '../../lambdas/config/route-config.ts';
import { refusal } from '../support/config-refusal.ts';

const ORDERS: RouteConfig = { name: 'orders', signature: { scheme: 'github' }, secretName: 's/orders', action: 'payout', actionTimeSeconds: 5 };
const STRIPE: RouteConfig = { name: 'stripe', signature: { scheme: 'stripe' }, secretName: 'retryproof/stripe', action: 'payout', actionTimeSeconds: 15 };

/**
 * A configuration of two routes, the second (routes[1], "stripe") patched; the demo is on, as
 * both routes run its action. Values are untyped on purpose.
 */
function withStripe(patch: Record<string, unknown>, top: Record<string, unknown> = {}): RetryproofConfig {
  const config: unknown = { routes: [ORDERS, { ...STRIPE, ...patch }], demo: true, ...top };
  return config as RetryproofConfig;
}

/** The two routes, with top-level fields added or replaced. */
function withTop(top: Record<string, unknown>): RetryproofConfig {
  return withStripe({}, top);
}


const A64 = `a${'b'.repeat(63)}`;

describe('a route field', () => {
  // [field, last accepted value, first refused value, the message]
  const cases: readonly (readonly [string, unknown, unknown, string])[] = [
    ['secretName', 'a/b_c+=.@-Z9', 'my secret', 'route "stripe": secretName must be a Secrets Manager name (1 to 512 letters, digits or /_+=.@-), got "my secret"'],
    ['secretName', 's'.repeat(512), 's'.repeat(513), `route "stripe": secretName must be a Secrets Manager name (1 to 512 letters, digits or /_+=.@-), got "${'s'.repeat(76)}...`],
    ['importSecret', true, 'yes', 'route "stripe": importSecret must be true or false, got "yes" (at routes[1].importSecret)'],
    ['ttlSeconds', 35 * 86_400, 1.5, 'route "stripe": ttlSeconds must be an integer >= 1, got 1.5'],
    ['senderRetryWindowSeconds', 1, 0, 'route "stripe": senderRetryWindowSeconds must be an integer >= 1, got 0'],
    [
      'actionTimeSeconds',
      296,
      297,
      "route \"stripe\": actionTimeSeconds must be an integer from 1 to 296 (its lease, 3x, and the 10 s completion margin must fit in Lambda's 900 s timeout), got 297",
    ],
    [
      'actionTimeSeconds',
      1,
      0,
      "route \"stripe\": actionTimeSeconds must be an integer from 1 to 296 (its lease, 3x, and the 10 s completion margin must fit in Lambda's 900 s timeout), got 0",
    ],
    ['maxAttempts', 100, 101, 'route "stripe": maxAttempts must be an integer from 1 to 100, got 101'],
    ['maxAttempts', 1, 0, 'route "stripe": maxAttempts must be an integer from 1 to 100, got 0'],
    ['action', A64, `${A64}c`, `route "stripe": action must be an action name: a letter, then up to 63 letters, digits, "-" or "_", got "${A64}c"`],
    ['action', 'Log_2-b', '2log', 'route "stripe": action must be an action name: a letter, then up to 63 letters, digits, "-" or "_", got "2log"'],
    ['keepHeaders', ['content-type'], 'content-type', 'route "stripe": keepHeaders must be a list of header names, got "content-type" (at routes[1].keepHeaders)'],
    ['keepHeaders', ['x-a!#$%&\'*+.^_`|~-1'], ['Content-Type'], 'route "stripe": keepHeaders[0] must be a lowercase header name, got "Content-Type"'],
    ['keepHeaders', ['constructors'], ['constructor'], 'route "stripe": keepHeaders[0] "constructor" cannot be kept (a reserved object key)'],
    ['keepHeaders', ['x-proto'], ['__proto__'], 'route "stripe": keepHeaders[0] "__proto__" cannot be kept (a reserved object key)'],
    ['keepHeaders', ['prototypes'], ['prototype'], 'route "stripe": keepHeaders[0] "prototype" cannot be kept (a reserved object key)'],
    ['breakerThreshold', 2, 1, 'route "stripe": breakerThreshold must be an integer >= 2, got 1'],
    ['breakerThreshold', 3, '3', 'route "stripe": breakerThreshold must be an integer >= 2, got "3" (at routes[1].breakerThreshold)'],
    ['breakerReaction', 'alert', 'stop', 'route "stripe": breakerReaction must be one of pause, alert, got "stop" (at routes[1].breakerReaction)'],
    ['duplicateAnswer', 'strict-409', '409', 'route "stripe": duplicateAnswer must be one of replay, strict-409, got "409" (at routes[1].duplicateAnswer)'],
    ['maxBodyBytes', 4_694_016, 4_694_017, 'route "stripe": maxBodyBytes must be an integer from 1 to 4694016, got 4694017'],
    ['claimCheckAboveBytes', 0, 131_073, 'route "stripe": claimCheckAboveBytes must be an integer from 0 to 131072, got 131073'],
    ['key', '{body:/id}', '{body:id}', 'route "stripe": key "{body:id}" is not a valid template: body pointer "id" must start with "/"'],
    ['key', 'k-{body:/id}', 7, 'route "stripe": key must be a key template, got 7 (at routes[1].key)'],
  ];

  it.each(cases)('%s accepts %j and refuses %j', (field, accepted, refused, message) => {
    expect(() => resolveConfig(withStripe({ [field]: accepted }))).not.toThrow();
    expect(refusal(withStripe({ [field]: refused }))).toBe(message);
  });

  it('applies the documented defaults when a field is left out', () => {
    const route = resolveConfig(withStripe({})).routes[1]!;
    expect(route).toMatchObject({
      importSecret: false,
      ttlSeconds: 35 * 86_400,
      maxAttempts: 5,
      keepHeaders: [],
      breakerThreshold: 3,
      breakerReaction: 'pause',
      duplicateAnswer: 'replay',
      maxBodyBytes: 4_694_016,
      claimCheckAboveBytes: 128 * 1024,
      signature: { scheme: 'stripe', toleranceSeconds: 300 },
    });
  });
});

describe('a route name', () => {
  it('accepts 1 to 63 lowercase letters, digits, "-" and "_" starting with a letter or digit', () => {
    expect(resolveConfig(withStripe({ name: `0${'a_-'.repeat(20)}xy` })).routes[1]!.name).toHaveLength(63);
    expect(resolveConfig(withStripe({ name: 'x' })).routes[1]!.name).toBe('x');
  });

  it('refuses an uppercase letter, a leading "-", 64 characters and a missing name, naming the route by its place', () => {
    const rule = 'name must be 1 to 63 lowercase letters, digits, "-" or "_", starting with a letter or digit';
    expect(refusal(withStripe({ name: 'Stripe' }))).toBe(`routes[1]: ${rule}, got "Stripe"`);
    expect(refusal(withStripe({ name: '-stripe' }))).toBe(`routes[1]: ${rule}, got "-stripe"`);
    expect(refusal(withStripe({ name: 'a'.repeat(64) }))).toBe(`routes[1]: ${rule}, got "${'a'.repeat(64)}"`);
    const nameless = Object.fromEntries(Object.entries(STRIPE).filter(([key]) => key !== 'name'));
    expect(refusal({ routes: [ORDERS, nameless], demo: true })).toBe('routes[1]: name is required');
  });

  it('refuses a name used by two routes', () => {
    expect(refusal({ routes: [STRIPE, { ...ORDERS, name: 'stripe' }], demo: true })).toBe('route "stripe": name is used twice');
    expect(resolveConfig({ routes: [STRIPE, ORDERS], demo: true }).routes.map((r) => r.name)).toEqual(['stripe', 'orders']);
  });
});

describe('a route signature', () => {
  const schemes = 'standard-webhooks, stripe, github, shopify, slack, hmac-sha256';

  it('refuses a scheme it does not know, or of the wrong type, naming the path', () => {
    expect(refusal(withStripe({ signature: { scheme: 'stripe-v2' } }))).toBe(
      `route "stripe": signature.scheme must be one of ${schemes}, got "stripe-v2" (at routes[1].signature.scheme)`,
    );
    expect(refusal(withStripe({ signature: { scheme: 42 } }))).toBe(
      `route "stripe": signature.scheme must be one of ${schemes}, got 42 (at routes[1].signature.scheme)`,
    );
    expect(refusal(withStripe({ signature: 'stripe' }))).toBe(
      'route "stripe": signature must be an object with a scheme, got "stripe" (at routes[1].signature)',
    );
  });

  it('accepts every scheme it knows', () => {
    for (const scheme of ['standard-webhooks', 'stripe', 'github', 'shopify', 'slack'] as const) {
      expect(resolveConfig(withStripe({ signature: { scheme } })).routes[1]!.signature.scheme).toBe(scheme);
    }
  });

  it('takes a tolerance from 1 to 3600 s on the timestamped schemes, and none on the others', () => {
    const rule = 'route "stripe": signature.toleranceSeconds must be an integer from 1 to 3600';
    expect(resolveConfig(withStripe({ signature: { scheme: 'slack', toleranceSeconds: 3600 } })).routes[1]!.signature).toEqual({
      scheme: 'slack',
      toleranceSeconds: 3600,
    });
    expect(refusal(withStripe({ signature: { scheme: 'slack', toleranceSeconds: 3601 } }))).toBe(`${rule}, got 3601`);
    expect(resolveConfig(withStripe({ signature: { scheme: 'stripe', toleranceSeconds: 1 } })).routes[1]!.signature).toEqual({
      scheme: 'stripe',
      toleranceSeconds: 1,
    });
    expect(refusal(withStripe({ signature: { scheme: 'stripe', toleranceSeconds: 0 } }))).toBe(`${rule}, got 0`);
    expect(refusal(withStripe({ signature: { scheme: 'github', toleranceSeconds: 300 } }))).toBe(
      'route "stripe": signature.toleranceSeconds is not a known key (the keys are: scheme)',
    );
  });

  it('needs a lowercase header on hmac-sha256, and takes a prefix and a hex or base64 encoding', () => {
    const hmac = { scheme: 'hmac-sha256', header: 'x-signature' };
    expect(resolveConfig(withStripe({ signature: hmac })).routes[1]!.signature).toEqual({ ...hmac, prefix: '', encoding: 'hex' });
    expect(resolveConfig(withStripe({ signature: { ...hmac, prefix: 'sha256=', encoding: 'base64' } })).routes[1]!.signature).toEqual({
      ...hmac,
      prefix: 'sha256=',
      encoding: 'base64',
    });
    expect(refusal(withStripe({ signature: { scheme: 'hmac-sha256' } }))).toBe('route "stripe": signature.header is required');
    expect(refusal(withStripe({ signature: { ...hmac, header: 'X-Signature' } }))).toBe(
      'route "stripe": signature.header must be a lowercase header name, got "X-Signature"',
    );
    expect(refusal(withStripe({ signature: { ...hmac, prefix: 5 } }))).toBe(
      'route "stripe": signature.prefix must be a string, got 5 (at routes[1].signature.prefix)',
    );
    expect(refusal(withStripe({ signature: { ...hmac, encoding: 'base32' } }))).toBe(
      'route "stripe": signature.encoding must be one of hex, base64, got "base32" (at routes[1].signature.encoding)',
    );
  });
});

describe('a route key template', () => {
  it('may read a header only when the scheme signs it', () => {
    expect(resolveConfig(withStripe({ signature: { scheme: 'standard-webhooks' }, key: 'eu_{header:webhook-id}' })).routes[1]!.key).toBe(
      'eu_{header:webhook-id}',
    );
    expect(refusal(withStripe({ signature: { scheme: 'slack' }, key: '{header:x-team}-{body:/id}' }))).toBe(
      'route "stripe": key "{header:x-team}-{body:/id}" reads the header x-team, which the slack signature does not cover: ' +
        "a captured delivery could be replayed under a fresh key. Read the key from {body:/pointer} fields, or leave key unset (the scheme's default key)",
    );
  });

  // Senders sign every retry afresh: a timestamp in the key makes each retry a new key and a new effect.
  const perRetry = (key: string, headers: string, who: string): string =>
    `route "stripe": key ${JSON.stringify(key)} reads ${headers}, which the sender signs afresh on every retry, with a new timestamp (${who}): ` +
    'every retry would be a new key, and run again. Key the event by what stays the same on every retry ' +
    "({body:/pointer} fields, {header:webhook-id} on Standard Webhooks), or leave key unset (the scheme's default key)";

  it.each([
    ['standard-webhooks', '{header:webhook-timestamp}', 'webhook-timestamp', 'Standard Webhooks'],
    ['slack', '{header:x-slack-request-timestamp}', 'x-slack-request-timestamp', 'Slack'],
    ['stripe', 'evt_{header:stripe-signature}', 'stripe-signature', 'Stripe, its t= part'],
  ])('refuses a %s template that reads only a timestamp, saying why', (scheme, key, headers, who) => {
    expect(refusal(withStripe({ signature: { scheme }, key }))).toBe(perRetry(key, headers, who));
  });

  it('refuses a timestamp beside a stable id too: one part that changes makes the whole key change', () => {
    const key = '{header:webhook-id}.{header:webhook-timestamp}';
    expect(refusal(withStripe({ signature: { scheme: 'standard-webhooks' }, key }))).toBe(perRetry(key, 'webhook-timestamp', 'Standard Webhooks'));
    const slack = '{body:/event_id}-{header:x-slack-request-timestamp}-{header:x-slack-signature}';
    expect(refusal(withStripe({ signature: { scheme: 'slack' }, key: slack }))).toBe(perRetry(slack, 'x-slack-request-timestamp, x-slack-signature', 'Slack'));
  });
});

describe('a route TTL', () => {
  // Stripe retries for 3 days; + 14 days of DLQ retention + the 24 h reconciliation window + the
  // last attempt's lease (15 s x 3).
  const cover = 3 * 86_400 + 14 * 86_400 + 86_400 + 45;

  it('accepts a TTL that covers the sender retry window, the DLQ retention, the reconciliation window and the lease exactly', () => {
    expect(resolveConfig(withStripe({ ttlSeconds: cover })).routes[1]).toMatchObject({ ttlSeconds: cover, coverSeconds: cover });
  });

  it('refuses one second less, with the sum spelt out', () => {
    expect(refusal(withStripe({ ttlSeconds: cover - 1 }))).toBe(
      `route "stripe": ttl ${cover - 1} s is shorter than its cover ${cover} s ` +
        '(sender retry window 259200 s + DLQ retention 1209600 s + reconciliation window 86400 s + lease 45 s (actionTimeSeconds 15 s x 3))',
    );
  });
});

describe('a misspelt or unknown key', () => {
  it('is refused in a route, with the key it most likely meant', () => {
    expect(refusal(withStripe({ brekerThreshold: 3 }))).toBe('route "stripe": brekerThreshold is not a known key (did you mean breakerThreshold?)');
    expect(refusal(withStripe({ secretname: 'x' }))).toBe('route "stripe": secretname is not a known key (did you mean secretName?)');
  });

  it('is refused with the list of keys when none is close', () => {
    expect(refusal(withStripe({ colour: 'red' }))).toBe(
      'route "stripe": colour is not a known key (the keys are: name, signature, secretName, importSecret, key, ttlSeconds, ' +
        'senderRetryWindowSeconds, actionTimeSeconds, actionTime, maxAttempts, action, keepHeaders, breakerThreshold, breakerReaction, ' +
        'duplicateAnswer, maxBodyBytes, claimCheckAboveBytes, rateLimit, concurrency, ownQueue, orderBy)',
    );
  });

  it('is refused at the top, in a section and in a signature', () => {
    expect(refusal(withTop({ logRetention: 30 }))).toBe('config: logRetention is not a known key (did you mean logRetentionDays?)');
    expect(refusal(withTop({ queue: { batchsize: 10 } }))).toBe('queue: batchsize is not a known key (did you mean batchSize?)');
    expect(refusal(withStripe({ signature: { scheme: 'stripe', tolerance: 300 } }))).toBe(
      'route "stripe": signature.tolerance is not a known key (did you mean toleranceSeconds?)',
    );
  });
});

describe('the routes list', () => {
  it('must hold at least one route object', () => {
    expect(resolveConfig({ routes: [STRIPE], demo: true }).routes).toHaveLength(1);
    expect(refusal({ routes: [] })).toBe('config: routes must list at least one route, got []');
    expect(refusal({ routes: STRIPE })).toMatch(/^config: routes must be a list of routes, got \{"name":"stripe",/);
    expect(refusal({})).toBe('config: routes is required');
    expect(refusal({ routes: [STRIPE, 'orders'] })).toBe('config: routes[1] must be a route object, got "orders"');
  });
});

describe('the configuration as a whole', () => {
  it('must be an object', () => {
    expect(refusal(null)).toBe('config must be an object, got null');
    expect(refusal('routes')).toBe('config must be an object, got "routes"');
  });

  it('reports every problem the schema finds, one line each', () => {
    expect(refusal(withStripe({ breakerThreshold: 1, maxAttempts: 0 }, { logRetentionDays: 0 }))).toBe(
      [
        'route "stripe": maxAttempts must be an integer from 1 to 100, got 0',
        'route "stripe": breakerThreshold must be an integer >= 2, got 1',
        'config: logRetentionDays must be an integer >= 1, got 0',
      ].join('\n'),
    );
  });
});

describe('actions', () => {
  it('accepts names of a letter and up to 63 letters, digits, "-" or "_", each with an entry and an optional ledger', () => {
    const actions = { [A64]: { entry: 'src/a.ts' }, 'log-2_b': { entry: '/abs/log.ts', ledger: 'src/log-ledger.ts' } };
    expect(() => resolveConfig(withTop({ actions }))).not.toThrow();
  });

  it('refuses a name that does not fit, naming it', () => {
    const rule = 'actions: name must be a letter, then up to 63 letters, digits, "-" or "_"';
    expect(refusal(withTop({ actions: { '2log': { entry: 'a.ts' } } }))).toBe(`${rule}, got "2log"`);
    expect(refusal(withTop({ actions: { [`${A64}c`]: { entry: 'a.ts' } } }))).toBe(`${rule}, got "${A64}c"`);
  });

  it('refuses the object internals as names, which would otherwise go unchecked', () => {
    for (const name of ['constructor', 'prototype', '__proto__']) {
      const actions = JSON.parse(`{"${name}": {"entry": "a.ts"}}`) as unknown;
      expect(refusal(withTop({ actions }))).toBe(`actions: name "${name}" cannot be used (a reserved object key)`);
    }
  });

  it('refuses an empty entry or ledger, a missing entry and an unknown key', () => {
    expect(refusal(withTop({ actions: { log: { entry: '' } } }))).toBe('action "log": entry must be a non-empty path, got ""');
    expect(refusal(withTop({ actions: { log: { entry: 'a.ts', ledger: '' } } }))).toBe('action "log": ledger must be a non-empty path, got ""');
    expect(refusal(withTop({ actions: { log: { ledger: 'l.ts' } } }))).toBe('action "log": entry is required');
    expect(refusal(withTop({ actions: { log: { entry: 'a.ts', ledgr: 'l.ts' } } }))).toBe(
      'action "log": ledgr is not a known key (did you mean ledger?)',
    );
    expect(refusal(withTop({ actions: { log: 'src/log.ts' } }))).toBe('actions: log must be an object { entry, ledger? }, got "src/log.ts"');
    expect(refusal(withTop({ actions: ['log'] }))).toBe('config: actions must be an object of actions by name, got ["log"]');
  });

  it('refuses an action named like the demo\'s while the demo is on, and takes it when the demo is off', () => {
    const payout = { payout: { entry: 'src/payout.ts' } };
    expect(refusal(withTop({ actions: payout }))).toBe(
      'actions: "payout" is the demo\'s action, deployed while demo is true; rename yours, or set demo: false',
    );
    expect(resolveConfig(withTop({ actions: payout, demo: false })).demo).toBe(false);
  });

  it('takes a route on the demo action whatever the demo switch (the app and the construct check that actions are supplied: the functions resolve a configuration without the switch), and refuses a switch that is no boolean', () => {
    expect(resolveConfig(withTop({ demo: false })).routes[0]?.action).toBe('payout');
    expect(refusal(withTop({ demo: 'no' }))).toBe('config: demo must be true or false, got "no"');
  });
});

describe('namePrefix', () => {
  it('accepts 1 to 40 letters, digits or "-", starting with a letter, as the prefix the construct derives (Retryproof)', () => {
    expect(() => resolveConfig(withTop({ namePrefix: `R${'-0'.repeat(19)}x` }))).not.toThrow();
    expect(() => resolveConfig(withTop({ namePrefix: 'r' }))).not.toThrow();
    expect(() => resolveConfig(withTop({ namePrefix: 'OrdersApp-Webhooks' }))).not.toThrow();
  });

  it('refuses 41 characters, an underscore and a leading digit', () => {
    const rule = 'config: namePrefix must be 1 to 40 letters, digits or "-", starting with a letter';
    expect(refusal(withTop({ namePrefix: 'r'.repeat(41) }))).toBe(`${rule}, got "${'r'.repeat(41)}"`);
    expect(refusal(withTop({ namePrefix: 'retry_proof' }))).toBe(`${rule}, got "retry_proof"`);
    expect(refusal(withTop({ namePrefix: '9retry' }))).toBe(`${rule}, got "9retry"`);
  });
});

describe('the queue', () => {
  // Two routes: the longest lease is 15 s x 3 = 45 s, + 10 s margin = a 55 s executor.
  const cases: readonly (readonly [string, unknown, unknown, string])[] = [
    ['maxReceiveCount', 1000, 1001, 'queue: maxReceiveCount must be an integer from 1 to 1000, got 1001'],
    ['visibilityTimeoutSeconds', 43_200, 43_201, 'queue: visibilityTimeoutSeconds must be an integer from 1 to 43200, got 43201'],
    ['batchSize', 10, 11, 'queue: batchSize must be an integer from 1 to 10, got 11'],
    ['batchSize', 1, 0, 'queue: batchSize must be an integer from 1 to 10, got 0'],
    ['batchSize', 5, '10', 'queue: batchSize must be an integer from 1 to 10, got "10"'],
    ['maxBatchingWindowSeconds', 300, 301, 'queue: maxBatchingWindowSeconds must be an integer from 0 to 300, got 301'],
    ['maxBatchingWindowSeconds', 0, -1, 'queue: maxBatchingWindowSeconds must be an integer from 0 to 300, got -1'],
    ['maxConcurrency', 1000, 1001, 'queue: maxConcurrency must be an integer from 2 to 1000, got 1001'],
    ['maxConcurrency', 2, 1, 'queue: maxConcurrency must be an integer from 2 to 1000, got 1'],
  ];

  it.each(cases)('%s accepts %j and refuses %j', (field, accepted, refused, message) => {
    expect(() => resolveConfig(withTop({ queue: { [field]: accepted } }))).not.toThrow();
    expect(refusal(withTop({ queue: { [field]: refused } }))).toBe(message);
  });

  it('takes a visibility timeout of 6x the executor timeout, and refuses one second less', () => {
    expect(resolveConfig(withTop({ queue: { visibilityTimeoutSeconds: 330 } })).queue).toMatchObject({
      visibilityTimeoutSeconds: 330,
      resendAfterSeconds: 390,
    });
    expect(refusal(withTop({ queue: { visibilityTimeoutSeconds: 329 } }))).toBe(
      "queue: visibilityTimeoutSeconds 329 s is under 6x the executor's timeout of 55 s (minimum 330 s)",
    );
  });

  it('takes a maxReceiveCount at the backstop of the largest maxAttempts, and refuses one less', () => {
    expect(resolveConfig(withTop({ queue: { maxReceiveCount: 12 } })).queue.maxReceiveCount).toBe(12);
    expect(refusal(withTop({ queue: { maxReceiveCount: 11 } }))).toBe(
      'queue: maxReceiveCount 11 is below the backstop 12 that route "orders" needs ' +
        '(2 x maxAttempts 5 + 2: a receive per attempt, one per lease found held, two to spare); ' +
        'the retry budget is maxAttempts, maxReceiveCount only catches workers that die without answering',
    );
  });

  it('must be an object', () => {
    expect(refusal(withTop({ queue: 5 }))).toBe('config: queue must be an object, got 5');
  });
});

describe('the other sections', () => {
  const cases: readonly (readonly [string, string, unknown, unknown, string])[] = [
    ['reconciliation', 'windowHours', 336, 337, 'reconciliation: windowHours must be an integer from 1 to 336, got 337'],
    ['reconciliation', 'windowHours', 1, 0, 'reconciliation: windowHours must be an integer from 1 to 336, got 0'],
    ['reconciliation', 'everyMinutes', 1440, 1441, 'reconciliation: everyMinutes must be an integer from 1 to 1440, got 1441'],
    ['reconciliation', 'settleSeconds', 3600, 3601, 'reconciliation: settleSeconds must be an integer from 1 to 3600, got 3601'],
    ['reconciliation', 'stuckAfterSeconds', 10, 0, 'reconciliation: stuckAfterSeconds must be an integer >= 1, got 0'],
    ['reconciliation', 'maxReenqueuePerRun', 1, 0, 'reconciliation: maxReenqueuePerRun must be an integer >= 1, got 0'],
    ['api', 'throttlingRateLimit', 1, 0, 'api: throttlingRateLimit must be an integer >= 1, got 0'],
    ['api', 'throttlingBurstLimit', 1, 0.5, 'api: throttlingBurstLimit must be an integer >= 1, got 0.5'],
    ['alarms', 'duplicateStormShare', 1, 1.01, 'alarms: duplicateStormShare must be a number above 0 and at most 1, got 1.01'],
    ['alarms', 'duplicateStormShare', 0.01, 0, 'alarms: duplicateStormShare must be a number above 0 and at most 1, got 0'],
    ['alarms', 'duplicateStormMinDeliveries', 1, 0, 'alarms: duplicateStormMinDeliveries must be an integer >= 1, got 0'],
  ];

  it.each(cases)('%s.%s accepts %j and refuses %j', (section, field, accepted, refused, message) => {
    expect(() => resolveConfig(withTop({ [section]: { [field]: accepted } }))).not.toThrow();
    expect(refusal(withTop({ [section]: { [field]: refused } }))).toBe(message);
  });

  it('takes a log retention of at least a day', () => {
    expect(resolveConfig(withTop({ logRetentionDays: 1 })).logRetentionDays).toBe(1);
    expect(refusal(withTop({ logRetentionDays: 0 }))).toBe('config: logRetentionDays must be an integer >= 1, got 0');
  });

  it('takes an alarm e-mail address', () => {
    expect(resolveConfig(withTop({ alarmEmail: 'ops@example.com' })).alarmEmail).toBe('ops@example.com');
    expect(refusal(withTop({ alarmEmail: 'ops@example' }))).toBe('config: alarmEmail must be an e-mail address, got "ops@example"');
  });

  it('applies the documented defaults', () => {
    const resolved = resolveConfig(withTop({}));
    expect(resolved).toMatchObject({
      // 21: the backstop 2 x 5 + 2, and the 9 receives a day-long outage spends (route-config.ts, outageReceiveCount).
      queue: { maxReceiveCount: 21, visibilityTimeoutSeconds: 330, batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 5 },
      clockSkewSeconds: 5,
      reconciliation: { windowHours: 24, everyMinutes: 60, settleSeconds: 300, stuckAfterSeconds: 900, maxReenqueuePerRun: 500 },
      api: { throttlingRateLimit: 200, throttlingBurstLimit: 400 },
      alarmEmail: undefined,
      alarms: { duplicateStormShare: 0.5, duplicateStormMinDeliveries: 20 },
      logRetentionDays: 30,
    });
  });
});

describe("a route's rate limit and isolation", () => {
  it('resolves one limit to an interval, and gives the route a queue of its own by default', () => {
    const [, stripe] = resolveConfig(withStripe({ rateLimit: { perMinute: 4 }, concurrency: 3 })).routes;
    expect(stripe).toMatchObject({ rateLimit: { count: 4, perSeconds: 60, intervalMs: 15_000, text: '4 per minute' }, concurrency: 3, ownQueue: true });
    const [orders] = resolveConfig(withStripe({})).routes;
    expect(orders).toMatchObject({ rateLimit: undefined, concurrency: undefined, ownQueue: false });
    const [, shared] = resolveConfig(withStripe({ rateLimit: { perHour: 2 }, ownQueue: false })).routes;
    expect(shared).toMatchObject({ rateLimit: { intervalMs: 1_800_000 }, ownQueue: false });
  });

  it('refuses two units, none, a limit above one item\'s write rate, and a concurrency without a queue of its own', () => {
    expect(refusal(withStripe({ rateLimit: { perSecond: 1, perMinute: 60 } }))).toContain('must give exactly one of perSecond, perMinute and perHour');
    expect(refusal(withStripe({ rateLimit: {} }))).toContain('must give exactly one of perSecond, perMinute and perHour');
    expect(resolveConfig(withStripe({ rateLimit: { perSecond: 200 } })).routes[1]?.rateLimit?.intervalMs).toBe(5);
    expect(refusal(withStripe({ rateLimit: { perSecond: 201 } }))).toContain('route "stripe": rateLimit.perSecond must be an integer from 1 to 200');
    expect(refusal(withStripe({ concurrency: 1 }))).toContain('concurrency must be an integer from 2 to 1000');
    expect(refusal(withStripe({ concurrency: 4, ownQueue: false }))).toBe(
      'route "stripe": concurrency 4 needs the route\'s own queue (its event source\'s maxConcurrency); drop ownQueue: false',
    );
  });
});
