import { createHash } from 'node:crypto';
import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { bodyObjectLifeDays } from '../../lambdas/domain/body-object.ts';

/**
 * The object names the receiver writes and reads: every body object is named
 * `bodies/<route>/<sha256(key)>/<fingerprint>` (lambdas/domain/body-object.ts, bodyObjectName),
 * and every grant on the bucket's objects is on this pattern, never on the whole bucket.
 */
export const BODY_OBJECTS_KEY_PATTERN = 'bodies/*';

/**
 * S3's longest bucket name: "Bucket names must be between 3 (min) and 63 (max) characters long"
 * (Amazon S3 User Guide, "General purpose bucket naming rules").
 */
const BUCKET_NAME_MAX = 63;
/** An AWS account id is always 12 digits. */
const ACCOUNT_ID_LENGTH = 12;
/**
 * The room kept for the Region's name, as lib/stateless/config-environment.ts keeps it: 20 characters,
 * above the longest Region's today. The name's length never depends on whether the Region is known
 * at synth (a stack with no `env`) or not, so one receiver's bucket keeps its name either way.
 */
const REGION_NAME_MAX = 20;
const BODIES_INFIX = '-bodies-';
/** What the name prefix may take of the bucket's name: 22 characters. */
const PREFIX_ROOM = BUCKET_NAME_MAX - BODIES_INFIX.length - ACCOUNT_ID_LENGTH - 1 - REGION_NAME_MAX;
/** Hex digits of the name prefix's SHA-256 that stand for the part of a long prefix cut off. */
const NAME_DIGEST_LENGTH = 8;
/**
 * Starts S3 refuses: "Bucket names must not start with the prefix xn--", "sthree-", "amzn-s3-demo-"
 * (Amazon S3 User Guide, "General purpose bucket naming rules"). The name ends in the Region, so
 * none of the refused endings (`-s3alias`, `--ol-s3`, ...) can occur.
 */
const RESERVED_STARTS = ['xn--', 'sthree-', 'amzn-s3-demo-'] as const;

/**
 * The physical name of a receiver's bucket of large bodies in one Region:
 * `<namePrefix, lowercase>-bodies-<account>-<region>`, e.g. `retryproof-bodies-123456789012-eu-west-1`.
 * Fixed, so that every other Region's functions can be granted on it by name: a record accepted
 * in one Region may be re-sent, and run, by another (docs/several-regions.md). Bucket names are
 * global, so the account and the Region make it unique; S3 allows lowercase only. A prefix longer
 * than 22 characters keeps its first 13 and appends 8 hex digits of its SHA-256 (stable across
 * synths; distinct for two prefixes that share their first characters), so the name never passes
 * S3's 63 whatever the Region. `account` and `region` may be CloudFormation's (tokens).
 * @throws Error when the prefix makes a name S3 refuses
 */
export function bodyBucketName(namePrefix: string, account: string, region: string): string {
  const lower = namePrefix.toLowerCase();
  if (!/^[a-z][a-z0-9-]*$/.test(lower)) {
    throw new Error(`name prefix "${namePrefix}" cannot start a bucket name: it takes letters, digits and "-", starting with a letter`);
  }
  const reserved = RESERVED_STARTS.find((start) => lower.startsWith(start));
  if (reserved !== undefined) {
    throw new Error(`name prefix "${namePrefix}" would start the body bucket's name with "${reserved}", which s3 refuses: use another namePrefix`);
  }
  if (!Token.isUnresolved(account) && !/^\d{12}$/.test(account)) throw new Error(`account "${account}" is not 12 digits`);
  if (!Token.isUnresolved(region) && !new RegExp(`^[a-z0-9-]{1,${REGION_NAME_MAX}}$`).test(region)) throw new Error(`region "${region}" is not a region name`);
  const digest = createHash('sha256').update(namePrefix).digest('hex').slice(0, NAME_DIGEST_LENGTH);
  const head = lower.length <= PREFIX_ROOM ? lower : `${lower.slice(0, PREFIX_ROOM - 1 - NAME_DIGEST_LENGTH)}-${digest}`;
  return `${head}${BODIES_INFIX}${account}-${region}`;
}

/** Props of {@link BodyBucket}. */
export interface BodyBucketProps {
  /**
   * The longest TTL of the receiver's routes, in seconds. An object expires
   * `bodyObjectLifeDays(longestTtlSeconds)` days after it was last written, the same figure the
   * functions renew objects by (lambdas/domain/body-object.ts).
   */
  readonly longestTtlSeconds: number;
  /**
   * The bucket's physical name: {@link bodyBucketName}, by which other Regions grant on it.
   * @default - a name CloudFormation generates
   */
  readonly bucketName?: string;
  /**
   * What happens to the bucket when it leaves the stack. It holds the bodies that retained
   * records (the events table is retained) and messages still in the queues point to.
   * @default RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE: kept, unless the deploy that made it is rolled back
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The bucket of large bodies (the S3 claim check): a body above its route's claimCheckAboveBytes,
 * or one SQS cannot carry, is stored here before its claim, and messages, records and dead-letter
 * copies carry only its pointer, `s3://<bucket>/<name>`. Private (all public access blocked, ACLs
 * off: the bucket owner owns every object), encrypted at rest, TLS only, not versioned (a renewal
 * copies an object onto itself; a version kept beside it would outlive the lifecycle). Objects
 * expire `bodyObjectLifeDays` of the longest TTL after their last write, and an upload left
 * incomplete is aborted after a day.
 */
export class BodyBucket extends Construct {
  readonly bucket: IBucket;
  /** Days an object lives after its last write: a put, or a renewal's copy onto itself. */
  readonly objectLifeDays: number;

  constructor(scope: Construct, id: string, props: BodyBucketProps) {
    super(scope, id);
    if (!Number.isInteger(props.longestTtlSeconds) || props.longestTtlSeconds <= 0) {
      throw new Error(`longest ttl ${props.longestTtlSeconds} s is not a positive whole number of seconds`);
    }
    const lifeDays = bodyObjectLifeDays(props.longestTtlSeconds);
    const bucket = new Bucket(this, 'Bucket', {
      ...(props.bucketName === undefined ? {} : { bucketName: props.bucketName }),
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // ACLs disabled: every object belongs to the bucket's account, and access is IAM's alone.
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // The bodies here are the ones the work queues carry below the threshold, and the queues
      // use their service's own key (SQS-managed SSE): the same protection for the same data. A
      // KMS key would add a KMS request to every put and get, and a grant to every reader.
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // The events table is retained for the idempotency records it holds (events-table.ts); its
      // records, and messages still in the queues, point here. A bucket deleted with the stack
      // would leave them pointing at nothing: every redrive and re-send would then go to people
      // without its body. Retained, the bucket empties itself by this lifecycle. (A bucket
      // CloudFormation should delete must be empty first, which would take an s3:DeleteObject
      // function nobody else needs.) Except on a first deploy rolled back: the bucket is then new and
      // empty, and kept under its fixed name it would fail the next deploy ("already exists";
      // RetainExceptOnCreate, CloudFormation Template Reference, "DeletionPolicy attribute").
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      lifecycleRules: [
        {
          id: 'expire-bodies',
          // S3 counts from the object's last write and rounds up to the next midnight UTC, and
          // never deletes earlier ("Lifecycle configuration elements", Amazon S3 User Guide).
          expiration: Duration.days(lifeDays),
          // The functions put whole objects (PutObject, CopyObject); nothing should be left
          // half-uploaded, and a part nobody completes is paid for until it is aborted.
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
    });
    Validations.of(bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "only the receiver's functions (and what grantRedrive admits) reach the bucket, through IAM grants on bodies/* alone; each object is " +
        "named by route, key hash and fingerprint, and its delivery's record and execution log already say who stored, ran and re-sent it. " +
        'A log bucket would be a second retained bucket for requests CloudTrail data events record, account-wide, when an account wants them',
    });
    this.bucket = bucket;
    this.objectLifeDays = lifeDays;
  }
}

/**
 * What a function needs to keep and read bodies in `bucket`, a receiver's bucket of this Region or
 * of another: GetObject (a read, and a HeadObject, which S3 authorises as GetObject) and PutObject
 * (a renewal copies the object onto itself: GetObject on the source, PutObject on the copy), on
 * `bodies/*` only, and ListBucket on the bucket: without it S3 answers a missing object 403, not
 * 404 ("If you don't have the s3:ListBucket permission, Amazon S3 returns an HTTP status code 403",
 * Amazon S3 API Reference, GetObject and HeadObject, Permissions), and the functions would take an
 * expired body for S3's failure and retry it instead of handing the delivery to people
 * (lambdas/store/s3-body-objects.ts reads 404 as "gone"). No DeleteObject: objects only expire.
 *
 * BucketGrants' own read()/put() are not used: they add `s3:GetObject*`, `s3:List*`,
 * `s3:GetBucket*` and `s3:Abort*`, wildcards over calls nobody makes, and no owner condition.
 */
export function grantKeepBodies(bucket: IBucket, grantee: IGrantable): void {
  grantOnBodies(bucket, grantee, ['s3:GetObject', 's3:PutObject']);
}

/**
 * GetObject on `bodies/*` of `bucket` and ListBucket on it (a missing object then reads as 404, not
 * 403), as {@link grantKeepBodies} grants them, for a person or a tool that only reads bodies.
 */
export function grantReadBodyObjects(bucket: IBucket, grantee: IGrantable): void {
  grantOnBodies(bucket, grantee, ['s3:GetObject']);
}

/**
 * Every grant on a body bucket holds only while the bucket is the receiver's account's: the other
 * Regions' buckets are found by name, and a name whose bucket is gone (a Region destroyed, its kept
 * bucket deleted) can be taken by any account (s3:ResourceAccount, "Verifying bucket ownership with
 * bucket owner condition", Amazon S3 User Guide; Service Authorization Reference, Amazon S3 condition keys).
 */
function grantOnBodies(bucket: IBucket, grantee: IGrantable, objectActions: readonly string[]): void {
  const conditions = { StringEquals: { 's3:ResourceAccount': Stack.of(bucket).account } };
  Grant.addToPrincipal({ grantee, actions: [...objectActions], resourceArns: [bucket.arnForObjects(BODY_OBJECTS_KEY_PATTERN)], conditions });
  Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [bucket.bucketArn], conditions });
}
