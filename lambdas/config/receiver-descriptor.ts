/**
 * How a deployed receiver tells the operator CLI where it is and which configuration it runs.
 *
 * Every WebhookReceiver writes one CloudFormation output whose value is this descriptor as
 * JSON. The CLI finds receivers by reading a stack's outputs (DescribeStacks) and keeping the
 * ones whose value parses here: no output key, logical id or construct id is assumed, so a
 * receiver with any id, and several receivers in one stack, are found alike.
 *
 * The configuration itself is not copied into the descriptor: it is the `retryproof:config`
 * metadata of the function `configResource` names, in the deployed template (CloudFormation
 * GetTemplate), the same configuration the construct bundled into the functions' code.
 *
 * Pure: no CDK, no SDK, so the construct, the CLI and their tests share it.
 */

/** The id of the descriptor's CfnOutput under the receiver (its key is CDK's logical id for it). */
export const RECEIVER_OUTPUT_ID = 'Receiver';

/** The output's description starts with this, so a person reading the stack sees what it is. */
export const RECEIVER_OUTPUT_DESCRIPTION = 'retryproof receiver: read by the retryproof CLI';

export const RECEIVER_DESCRIPTOR_VERSION = 1;

export interface ReceiverDescriptor {
  /** The descriptor's version: {@link RECEIVER_DESCRIPTOR_VERSION}. */
  readonly retryproof: typeof RECEIVER_DESCRIPTOR_VERSION;
  /** The receiver's construct path below its stack (`Webhooks`, `Payments/Receiver`; `Default` for the app's own). */
  readonly receiver: string;
  /** The prefix of the receiver's physical names. */
  readonly namePrefix: string;
  readonly region: string;
  readonly apiUrl: string;
  readonly queueUrl: string;
  /**
   * The queue of each route with one of its own (ownQueue), by route; all of them dead-letter
   * to `dlqUrl`. @default - none (a descriptor written before routes had their own queues)
   */
  readonly routeQueueUrls?: Readonly<Record<string, string>>;
  readonly dlqUrl: string;
  readonly eventsTable: string;
  /**
   * The bucket of large bodies in the receiver's Region (the S3 claim check), which the operator
   * tools pass on so that a re-send keeps a body object alive. @default - none (a descriptor
   * written before the receiver had a bucket)
   */
  readonly bodyBucket?: string;
  /** The demo's ledger table, only with `demo: true`. */
  readonly ledgerTable?: string;
  /**
   * The logical id, in the receiver's stack, of the function whose template metadata
   * {@link CONFIG_METADATA} is the receiver's configuration as deployed (the reconciler).
   */
  readonly configResource: string;
}

/**
 * The key, in the `Metadata` of the function a descriptor names, of the receiver's configuration
 * as deployed: a template's resource metadata costs the function nothing (no environment, no code).
 */
export const CONFIG_METADATA = 'retryproof:config';

/**
 * Where a receiver deployed before the configuration moved into the functions' code keeps it:
 * an environment variable of the same function, holding its JSON.
 */
const CONFIG_VARIABLE_BEFORE = 'RETRYPROOF_CONFIG';

/** The part of a template's resource that may hold a receiver's configuration. */
export interface ConfigResource {
  readonly Metadata?: Readonly<Record<string, unknown>>;
  readonly Properties?: { readonly Environment?: { readonly Variables?: Readonly<Record<string, unknown>> } };
}

/**
 * The configuration a deployed receiver runs, as its template holds it on the descriptor's
 * `configResource`: its {@link CONFIG_METADATA}, or, deployed by an earlier version, the JSON of
 * its RETRYPROOF_CONFIG variable. Not yet checked: resolveConfig does that.
 * @returns undefined when the resource holds neither
 * @throws SyntaxError when the earlier variable is not JSON
 */
export function deployedConfigOf(resource: ConfigResource | undefined): unknown {
  const metadata = resource?.Metadata?.[CONFIG_METADATA];
  if (metadata !== undefined) return metadata;
  const before = resource?.Properties?.Environment?.Variables?.[CONFIG_VARIABLE_BEFORE];
  return typeof before === 'string' ? JSON.parse(before) : undefined;
}

const REQUIRED_STRINGS = ['receiver', 'namePrefix', 'region', 'apiUrl', 'queueUrl', 'dlqUrl', 'eventsTable', 'configResource'] as const;

/**
 * The descriptor an output value holds, or undefined when the value is not one (any other
 * output of the stack, or a descriptor of a version this CLI does not read).
 */
export function parseReceiverDescriptor(value: string | undefined): ReceiverDescriptor | undefined {
  if (value === undefined || !value.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  if (record.retryproof !== RECEIVER_DESCRIPTOR_VERSION) return undefined;
  for (const field of REQUIRED_STRINGS) {
    if (typeof record[field] !== 'string' || record[field] === '') return undefined;
  }
  if (record.ledgerTable !== undefined && typeof record.ledgerTable !== 'string') return undefined;
  if (record.bodyBucket !== undefined && typeof record.bodyBucket !== 'string') return undefined;
  const own = record.routeQueueUrls;
  if (own !== undefined && (typeof own !== 'object' || own === null || Object.values(own).some((url) => typeof url !== 'string'))) return undefined;
  return record as unknown as ReceiverDescriptor;
}
