/**
 * An AWS failure as one line saying what to do, the way the AWS CLI's own messages point to
 * `aws configure` and `aws sso login`. Matched by the error's `name`, which is how the SDK
 * tells errors apart, and by its message where the name alone is too broad:
 *
 * - No credentials: CredentialsProviderError (class in @smithy/core/config, `name =
 *   "CredentialsProviderError"`), message "Could not load credentials from any providers"
 *   from the default chain (@aws-sdk/credential-provider-node dist-cjs/index.js), or "Could not
 *   resolve credentials using profile: [P] ..." from fromIni.
 * - An expired SSO session: the same class, its message "The SSO session associated with this
 *   profile has expired. To refresh this SSO session run aws sso login with the corresponding
 *   profile." (@aws-sdk/credential-provider-sso dist-cjs/index.js), or, for an sso-session
 *   profile, TokenProviderError "Token is expired. To refresh this SSO session run 'aws sso
 *   login' ..." re-thrown by it with that message (@aws-sdk/token-providers).
 * - Expired temporary credentials: the service answers ExpiredToken (query protocol:
 *   CloudFormation, SQS's query-compatible codes) or ExpiredTokenException (JSON: DynamoDB).
 * - Refused: AccessDenied (CloudFormation, SQS) or AccessDeniedException (DynamoDB), whose
 *   message is IAM's "User: ARN is not authorized to perform: cloudformation:DescribeStacks on
 *   resource: ..." (SQS writes the action in lower case, "sqs:receivemessage").
 *
 * A service error is a ServiceException (@smithy/core/client): `name` is the error code,
 * with `$fault` and `$metadata`; tests build them that way.
 */
import { profileOf } from './aws-clients.ts';

const EXPIRED_TOKEN = new Set(['ExpiredToken', 'ExpiredTokenException', 'TokenRefreshRequired', 'RequestExpired']);
const DENIED = new Set(['AccessDenied', 'AccessDeniedException', 'UnauthorizedOperation', 'AuthorizationError']);
const BAD_KEYS = new Set(['InvalidClientTokenId', 'UnrecognizedClientException', 'SignatureDoesNotMatch', 'IncompleteSignature']);

/** The action IAM names in an access-denied message, as `service:Action`; undefined when it names none. */
export function deniedAction(message: string): string | undefined {
  return /not authorized to perform:? ([a-z0-9-]+:[A-Za-z0-9*]+)/i.exec(message)?.[1];
}

/** The principal IAM names in an access-denied message (`User: arn:...`). */
function deniedPrincipal(message: string): string | undefined {
  return /User: (arn:[^\s]+) is not authorized/.exec(message)?.[1];
}

/**
 * The line for a failure of the AWS SDK, or undefined when `err` is not one this knows
 * (a network failure, a bug): the caller says something general then.
 */
export function awsFailureLine(err: unknown, env: NodeJS.ProcessEnv): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const profile = profileOf(env);
  const firstLine = err.message.split('\n')[0] ?? '';
  if (err.name === 'CredentialsProviderError' || err.name === 'TokenProviderError') {
    if (/SSO session .*(expired|invalid)|Token is expired|refresh failed|aws sso login/i.test(err.message)) {
      return `the AWS SSO session of profile ${profile} has expired: run aws sso login --profile ${profile}`;
    }
    const missingProfile = /using profile: \[([^\]]+)\]/.exec(err.message)?.[1];
    if (missingProfile !== undefined) {
      return `no AWS credentials for profile ${missingProfile} in the AWS config files: run aws configure --profile ${missingProfile} (or aws sso login --profile ${missingProfile}), or set AWS_PROFILE to a profile that has them`;
    }
    return 'no AWS credentials: set AWS_PROFILE or run aws configure / aws sso login';
  }
  if (EXPIRED_TOKEN.has(err.name)) {
    return `the AWS session has expired (${err.name}): run aws sso login --profile ${profile}, or renew the credentials you set, then retry`;
  }
  if (BAD_KEYS.has(err.name)) {
    return `AWS does not accept these credentials (${err.name}: ${firstLine}): set AWS_PROFILE or run aws configure / aws sso login`;
  }
  if (DENIED.has(err.name) || /AccessDenied|NotAuthorized/.test(err.name)) {
    const action = deniedAction(err.message);
    const who = deniedPrincipal(err.message);
    return action === undefined
      ? `AWS refused the call (${err.name}: ${firstLine}): use a role allowed to operate the receiver`
      : `AWS refused ${action}${who === undefined ? '' : ` to ${who}`}: use a role that allows ${action} (or ask for it)`;
  }
  return undefined;
}
